/**
 * A gone path's row (`GonePage`, `META#GONE`) as serving sees it: a generation like META's, whose
 * body is in the row itself rather than in the bucket. META, when there is one, always wins.
 */
import type { CacheMeta, GonePage, PageRows } from './model.js';
import type { StoredBody } from './ports.js';

/** The gone row as the generation it stands for (no body object: `s3Key` is empty). */
export const goneAsMeta = (gone: GonePage): CacheMeta => ({
  pk: gone.pk,
  s3Key: '',
  generatedAt: gone.generatedAt,
  revalidateSeconds: gone.revalidateSeconds,
  etag: gone.etag,
  ttl: gone.ttl,
  cacheKey: gone.cacheKey,
  contentType: gone.contentType,
  statusCode: gone.statusCode,
  headers: gone.headers,
  contentLength: gone.body.byteLength,
});

/** A generation to serve, and its body when the row holds it (a gone path's). */
export interface ServedGeneration {
  readonly meta: CacheMeta;
  readonly inline?: StoredBody | undefined;
}

/**
 * What a viewer is served from the rows one read returned: META (its body in the bucket), else a
 * gone path's row with its body inline; undefined when neither is there.
 */
export function servedGenerationOf(rows: PageRows): ServedGeneration | undefined {
  if (rows.meta !== undefined) return { meta: rows.meta };
  const gone = rows.gone;
  if (gone === undefined) return undefined;
  const inline: StoredBody = {
    body: gone.body,
    etag: gone.etag,
    contentType: gone.contentType,
    metadata: { status: gone.statusCode, contentType: gone.contentType },
  };
  return { meta: goneAsMeta(gone), inline };
}
