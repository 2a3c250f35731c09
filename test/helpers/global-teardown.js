import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  const state = globalThis.__ISR_BACKENDS__;
  if (state === undefined) return;
  await state.backends.stop();
  rmSync(state.directory, { recursive: true, force: true });
}
