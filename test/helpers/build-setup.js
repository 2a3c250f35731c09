// Jest loads global setup outside its module system, so this file is plain ESM and loads the
// TypeScript build through tsx.
import { tsImport } from 'tsx/esm/api';

const buildTargets = async (targets) => {
  const build = await tsImport('../../scripts/build-targets.ts', import.meta.url);
  return build.buildTargets(targets);
};

/**
 * Builds the prebuilt Lambda bundles the construct deploys (`dist/functions`) when they are
 * missing or older than their sources, so a fresh clone's `npm test` works; a few
 * milliseconds when nothing changed.
 */
export default async function buildSetup() {
  await buildTargets(['functions']);
}

/**
 * The rest of what `npm pack` ships (cli, next, esm), before any worker starts: suites in two
 * workers pack at once, and two builds of a stale target would replace each other's `dist/`
 * folder under the tarball. A failed build fails the run here, with its own error, rather than
 * later as two packs racing to rebuild it.
 */
export async function buildPackedTargets() {
  await buildTargets(['cli', 'next', 'esm']);
}
