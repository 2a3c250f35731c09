/**
 * Work a later publish made moot (issue 19, item 19): a FAILED regeneration, or a lost one
 * (STARTED past its expected completion), of a page whose META was published after it failed or
 * was claimed. Such a row is resolved (`WorkResolution`) and no longer reported, so
 * `FailedTasksAlarm`, `isr failed` and `isr stuck` clear on their own once the page publishes.
 *
 * Done by the sweeper rather than by the publish: finding a page's open REQ# rows at publish time
 * would Query every REQ# row of its partition on every publish; here the cost follows the rows
 * in the status index, which are rare.
 */
import { RequestStatus } from '../page/rows.js';
import type { StatusRow, WorkResolution } from './ports.js';

/** When the work began to need a person: a FAILED row's failure, a STARTED row's claim. */
const sinceOf = (row: StatusRow, status: RequestStatus): number =>
  status === RequestStatus.Started ? (row.createdAt ?? row.at) : row.at;

/**
 * Resolves the rows a later publish made moot. @returns the rows still open, and how many were
 * resolved (a row changed since it was read is left as it is, and still reported)
 */
export async function resolveSuperseded(
  resolution: WorkResolution | undefined,
  rows: readonly StatusRow[],
  status: RequestStatus,
  now: number,
): Promise<{ open: StatusRow[]; resolved: number }> {
  if (resolution === undefined) return { open: [...rows], resolved: 0 };
  const published = new Map<string, Promise<number | undefined>>();
  const publishedAt = (pk: string) => {
    if (!published.has(pk)) published.set(pk, resolution.publishedAt(pk));
    return published.get(pk)!;
  };
  const open: StatusRow[] = [];
  let resolved = 0;
  for (const row of rows) {
    const generatedAt = await publishedAt(row.pk);
    const moot = generatedAt !== undefined && generatedAt > sinceOf(row, status);
    if (moot && (await resolution.resolve(row, { status, generatedAt, now }))) resolved += 1;
    else open.push(row);
  }
  return { open, resolved };
}
