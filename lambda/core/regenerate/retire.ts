import type { RegenerateDeps } from './deps.js';

/**
 * Retires a body no META or kept version points to (see `BodyStore.deleteBody`). A caller
 * without delete rights (the origin) leaves it to the sweeper, which retires bodies nothing
 * points to once they are older than its safety window.
 */
export async function retireBody(
  deps: Pick<RegenerateDeps, 'bodies' | 'log'>,
  s3Key: string,
): Promise<void> {
  try {
    await deps.bodies.deleteBody(s3Key);
  } catch (error) {
    deps.log?.warn('could not delete an unreferenced body; the sweeper will', { s3Key, error });
  }
}
