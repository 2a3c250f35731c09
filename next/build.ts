/**
 * Builds `facetheory-isr/next` as the package ships it: one ESM file, the adapter and the
 * service rules it shares (the signed string, CloudFront's tag rules) bundled in, readable (a
 * library in someone's server: stack traces matter more than bytes). The SigV4 signer and the
 * AWS credential chain stay imports, loaded on first use only, from the package's dependencies.
 * `npm run build -- next` writes `dist/next/index.mjs` (scripts/build-targets.ts).
 */
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { fileURLToPath } from 'node:url';

/** Loaded lazily by next/sigv4.ts, and only for an AWS_IAM endpoint. */
export const NEXT_ADAPTER_EXTERNALS = ['@smithy/signature-v4', '@aws-sdk/credential-provider-node'];

export const NEXT_ADAPTER_BUNDLING: BuildOptions = {
  entryPoints: [fileURLToPath(new URL('./index.ts', import.meta.url))],
  bundle: true,
  platform: 'node',
  format: 'esm',
  // Next.js 16 runs on Node 20.9+.
  target: 'node20',
  minify: false,
  external: NEXT_ADAPTER_EXTERNALS,
  legalComments: 'none',
  logLevel: 'silent',
};

/** Bundles the adapter into `outfile` (`.mjs`, so Node reads it as ESM wherever it lies). */
export async function bundleNextAdapter(outfile: string): Promise<Metafile> {
  const result = await build({ ...NEXT_ADAPTER_BUNDLING, outfile, metafile: true });
  return result.metafile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2] ?? 'dist/next';
  await bundleNextAdapter(`${outdir}/index.mjs`);
  console.log(`${outdir}/index.mjs`);
}
