import type { FanOutProgress } from '../../core/revalidate/ports.js';

/** Keys of the fan-out progress rows, shared by the DynamoDB adapter and its fake. */
export const FAN_OUT_PK = 'FANOUT';

/** `<tenant or _>#<effect_id>#<mode>#<tag>`: one row per tag fan-out, all in one partition. */
export const fanOutSortKey = (
  progress: Pick<FanOutProgress, 'tenant' | 'effectId' | 'mode' | 'tag'>,
): string => `${progress.tenant ?? '_'}#${progress.effectId}#${progress.mode}#${progress.tag}`;
