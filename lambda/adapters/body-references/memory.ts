import type { BodyReferences, PageReferences } from '../../core/operate/ports.js';
import { MemoryTable } from '../shared/memory-table.js';

/**
 * What points to a page's bodies, read from the in-memory rows, with the DynamoDB adapter's
 * guard: a VER# row is deleted only while META does not list it. `beforeForget` lets a test run
 * a write between the read and a delete (a publish that lists the row meanwhile).
 */
export class InMemoryBodyReferences implements BodyReferences {
  /** The pages whose references were read, in order. */
  readonly reads: string[] = [];
  /** `<pk> <sk>` of every VER# row deleted. */
  readonly forgotten: string[] = [];
  beforeForget: ((pk: string, sk: string) => void) | undefined;

  constructor(readonly state: MemoryTable) {}

  of(pk: string): Promise<PageReferences> {
    this.reads.push(pk);
    const meta = this.state.metas.get(pk);
    const listed = new Set(meta?.versionSks ?? []);
    const s3Keys = new Set<string>(meta === undefined ? [] : [meta.s3Key]);
    const unlisted: { sk: string; s3Key: string | undefined }[] = [];
    for (const version of this.#versionsOf(pk)) {
      if (listed.has(version.sk)) s3Keys.add(version.s3Key);
      else unlisted.push({ sk: version.sk, s3Key: version.s3Key });
    }
    const lock = this.state.locks.get(pk);
    const lease = lock === undefined ? undefined : { token: lock.token, expiresAt: lock.expiresAt };
    return Promise.resolve({ s3Keys, unlisted, lease });
  }

  forgetUnlisted(pk: string, sks: readonly string[]): Promise<string[]> {
    const deleted: string[] = [];
    for (const sk of sks) {
      this.beforeForget?.(pk, sk);
      if (this.state.metas.get(pk)?.versionSks?.includes(sk) === true) continue;
      this.state.versions.delete(MemoryTable.versionId(pk, sk));
      deleted.push(sk);
      this.forgotten.push(`${pk} ${sk}`);
    }
    return Promise.resolve(deleted);
  }

  #versionsOf(pk: string) {
    return [...this.state.versions.entries()]
      .filter(([id]) => id.startsWith(`${pk}\u0000`))
      .map(([, version]) => version)
      .sort((a, b) => (a.sk < b.sk ? -1 : 1));
  }
}
