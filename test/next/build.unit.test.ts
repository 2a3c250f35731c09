import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { build, type Metafile } from 'esbuild';
import {
  bundleNextAdapter,
  NEXT_ADAPTER_BUNDLING,
  NEXT_ADAPTER_EXTERNALS,
} from '../../next/build.js';

/**
 * `facetheory-isr/next` as shipped: one readable ESM file. Its size is deterministic, so its
 * budget is a test: the adapter and the rules it shares with the service, nothing else. The data
 * cache (its store, the tag-time reads, the `'use cache'` handler) took it from 16.7 to 31 KB;
 * the Next.js version check (2.3 KB) and the edge-safe built-ins (1.0 KB) to 34.9 KB.
 */
const ADAPTER_BUDGET_BYTES = 38_000;

describe('the Next.js adapter bundle', () => {
  const folder = mkdtempSync(join(tmpdir(), 'isr-next-adapter-'));
  const outfile = join(folder, 'index.mjs');
  let metafile: Metafile;
  beforeAll(async () => {
    metafile = await bundleNextAdapter(outfile);
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('stays within its budget', () => {
    expect(statSync(outfile).size).toBeLessThanOrEqual(ADAPTER_BUDGET_BYTES);
  });

  it('holds only the adapter and the core rules it shares: no CDK, no AWS SDK client', () => {
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.filter((input) => input.includes('node_modules'))).toEqual([]);
    expect(inputs.every((input) => /^(next|lambda\/core)\//.test(input))).toBe(true);
  });

  it('imports nothing up front: Next bundles it into edge middleware, which takes no node: import', () => {
    const code = readFileSync(outfile, 'utf8');
    expect(code).not.toMatch(/^import\b/m);
    expect(code).not.toMatch(/\bfrom\s*["']node:/);
    expect(code).toContain('getBuiltinModule');
  });

  it('loads the SigV4 pieces on first use only, hidden from webpack and Turbopack', () => {
    const code = readFileSync(outfile, 'utf8');
    const loaded = [
      ...code.matchAll(
        /await import\(\s*\/\* webpackIgnore: true \*\/\s*\/\* turbopackIgnore: true \*\/\s*"([^"]+)"\s*\)/g,
      ),
    ].map((m) => m[1]);
    expect(loaded.sort()).toEqual([...NEXT_ADAPTER_EXTERNALS].sort());
  });

  it('refuses a node: import next/node-builtins.ts does not stand for (negative control)', async () => {
    const entry = join(folder, 'reads-files.ts');
    writeFileSync(
      entry,
      "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n",
    );
    await expect(
      build({ ...NEXT_ADAPTER_BUNDLING, entryPoints: [entry], outfile: join(folder, 'x.mjs') }),
    ).rejects.toThrow(/node:fs is not in next\/node-builtins\.ts/);
  });

  it('loads under plain node as the cacheHandler Next imports: a class with its methods', () => {
    const script = `const { default: Handler } = await import(${JSON.stringify(pathToFileURL(outfile).href)});
      const handler = new Handler({});
      console.log(['get', 'set', 'revalidateTag', 'resetRequestCache'].map((m) => typeof handler[m]).join());
      console.log(String(await handler.get('k')));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, ISR_REVALIDATE_URL: 'http://127.0.0.1:3000/_isr/revalidate' },
      encoding: 'utf8',
    });
    expect(out.trim().split('\n')).toEqual(['function,function,function,function', 'null']);
  });
});
