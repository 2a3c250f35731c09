import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  const state = globalThis.__ISR_BACKENDS__;
  if (state === undefined) return;
  // Each entry says what did not stop on its own (e.g. DynamoDB Local killed from outside).
  const problems = await state.backends.stop();
  if (problems.length > 0)
    console.warn(`the test backends did not stop cleanly:\n  - ${problems.join('\n  - ')}`);
  rmSync(state.directory, { recursive: true, force: true });
}
