/**
 * Whether a build target is up to date, without building it: each target records the files it
 * was built from (esbuild's metafile, tsc's source files) and a hash over their contents. The
 * next run hashes the same files again; a changed, added (an importer changed) or deleted input
 * rebuilds, anything else costs a few milliseconds.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Stamp {
  readonly fingerprint: string;
  /** Repository paths the target was built from. */
  readonly inputs: readonly string[];
}

/** One hash over every input's path and content; a missing input never matches. */
export function fingerprintOf(root: string, inputs: readonly string[]): string | undefined {
  const hash = createHash('sha256');
  for (const input of [...new Set(inputs)].sort()) {
    const file = join(root, input);
    if (!existsSync(file)) return undefined;
    hash.update(`${input}\0`).update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const stampFile = (root: string, target: string) => join(root, 'dist', '.stamps', `${target}.json`);

/** True when the target's outputs exist and none of its inputs changed since it was built. */
export function isFresh(root: string, target: string, outputs: readonly string[]): boolean {
  const file = stampFile(root, target);
  if (!existsSync(file) || outputs.some((output) => !existsSync(join(root, output)))) return false;
  const stamp = JSON.parse(readFileSync(file, 'utf8')) as Stamp;
  return fingerprintOf(root, stamp.inputs) === stamp.fingerprint;
}

export function writeStamp(root: string, target: string, inputs: readonly string[]): void {
  const fingerprint = fingerprintOf(root, inputs);
  if (fingerprint === undefined) throw new Error(`${target}: an input vanished during the build`);
  const file = stampFile(root, target);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ fingerprint, inputs: [...inputs].sort() }, null, 1)}\n`);
}
