// Jest loads global setup outside its module system, so this file is plain ESM and loads the
// TypeScript build through tsx.
import { tsImport } from 'tsx/esm/api';

/**
 * Builds the prebuilt Lambda bundles the construct deploys (`dist/functions`) when they are
 * missing or older than their sources, so a fresh clone's `npm test` works; a few
 * milliseconds when nothing changed.
 */
export default async function buildSetup() {
  const { buildTargets } = await tsImport('../../scripts/build-targets.ts', import.meta.url);
  await buildTargets(['functions']);
}
