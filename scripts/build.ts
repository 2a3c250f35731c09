/**
 * `npm run build [-- functions cli esm]`: builds what the package ships into `dist/`, each
 * target only when its inputs changed (see build-targets.ts). npm pack/publish run it first.
 */
import { buildTargets, TARGETS, type Target } from './build-targets.js';

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(TARGETS as readonly string[]).includes(name));
if (unknown.length > 0) {
  console.error(`unknown build target ${unknown.join(', ')}: choose from ${TARGETS.join(', ')}`);
  process.exit(2);
}
const started = performance.now();
const built = await buildTargets(requested.length > 0 ? (requested as Target[]) : TARGETS);
const took = Math.round(performance.now() - started);
console.error(
  built.length > 0 ? `built ${built.join(', ')} in ${took} ms` : `dist is up to date (${took} ms)`,
);
