/** Keys of the in-progress rows, shared by the DynamoDB adapter and its fake. */
export const IN_PROGRESS_PREFIX = 'REVALIDATING#';
export const IN_PROGRESS_SK = 'STATE';

/** `REVALIDATING#<tenant or _>#<shard>`: one partition per shard, so reads spread. */
export const inProgressPartition = (tenant: string | undefined, shard: number): string =>
  `${IN_PROGRESS_PREFIX}${tenant ?? '_'}#${shard}`;
