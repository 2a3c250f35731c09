/**
 * The BodyStore port's contract: a body written once under its key, read back with what
 * FaceTheory's runtime reads of it, retired (a missing one is no error). Left out where the
 * backend lacks it: s3rver ignores `If-None-Match: *` (`BucketSubject.refusesOverwrite`), and has
 * no versioning, so a retired body is only checked gone (S3 keeps it as a noncurrent version).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BodyNotFoundError } from '../../../../lambda/core/errors.js';
import type { BucketSubject } from '../../../helpers/contract-subjects.js';

export function bodyStoreContract(name: string, make: () => Promise<BucketSubject>): void {
  describe(`BodyStore contract (${name})`, () => {
    let s: BucketSubject;
    let keys = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    const freshKey = () => `pages/_/contract/${++keys}`;
    const html = (text: string) => new TextEncoder().encode(text);
    const put = (s3Key: string, text = '<p>café</p>') =>
      s.bodies.putBody({
        s3Key,
        body: html(text),
        contentType: 'text/html; charset=utf-8',
        metadata: {
          status: 404,
          contentType: 'text/html',
          contentSecurityPolicy: "default-src 'self'",
        },
      });

    it('reads back the bytes, the content type and the FaceTheory metadata written', async () => {
      const s3Key = freshKey();
      const written = await put(s3Key);
      expect(written.s3Key).toBe(s3Key);
      expect(written.etag).toMatch(/^"[0-9a-f]{32}"$/);
      const stored = await s.bodies.getBody(s3Key);
      expect(new TextDecoder().decode(stored.body)).toBe('<p>café</p>');
      expect(stored).toMatchObject({
        etag: written.etag,
        contentType: 'text/html; charset=utf-8',
        metadata: {
          status: 404,
          contentType: 'text/html',
          contentSecurityPolicy: "default-src 'self'",
        },
      });
    });

    it('answers BodyNotFoundError for a key never written', async () => {
      await expect(s.bodies.getBody(freshKey())).rejects.toBeInstanceOf(BodyNotFoundError);
    });

    it('retires a body, and takes a body already gone as retired', async () => {
      const s3Key = freshKey();
      await put(s3Key);
      await s.bodies.deleteBody(s3Key);
      await expect(s.bodies.getBody(s3Key)).rejects.toBeInstanceOf(BodyNotFoundError);
      await expect(s.bodies.deleteBody(s3Key)).resolves.toBeUndefined();
    });

    it('never replaces a body under a key already written (where the backend enforces it)', async () => {
      const s3Key = freshKey();
      await put(s3Key, 'first');
      const again = put(s3Key, 'second').then(
        () => 'replaced',
        () => 'refused',
      );
      const outcome = {
        put: await again,
        body: new TextDecoder().decode((await s.bodies.getBody(s3Key)).body),
      };
      expect(outcome).toEqual(
        s.refusesOverwrite
          ? { put: 'refused', body: 'first' }
          : { put: 'replaced', body: 'second' },
      );
    });
  });
}
