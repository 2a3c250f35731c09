/**
 * A revalidation's status, by effect id: what `GET <revalidate URL>/<effect_id>` answers (same
 * auth as the POST: the signed string covers method and path, so a signature for one effect's
 * status reads no other) and what `isr revalidate status` prints. Unknown effect id: 404.
 */
import type { JsonValue } from '../idempotency.js';
import type { RevalidationStatus } from './ports.js';
import type { Revalidation, RevalidationEffect } from './model.js';
import { deferredJson } from './soft-purge.js';

const EFFECT_ID = /^rv_[0-9a-f]{32}$/;

/**
 * The effect id a status GET names: the last segment of its path, when that segment is one.
 * `/_isr/revalidate/rv_...` locally, `/rv_...` on the function URL.
 */
export function statusTargetOf(target: string): string | undefined {
  const path = target.split('?')[0] ?? '';
  const last = path.slice(path.lastIndexOf('/') + 1);
  return EFFECT_ID.test(last) ? last : undefined;
}

/** The status written when a revalidation is accepted, before any page is marked. */
export const acceptedStatus = (revalidation: Revalidation, atMs: number): RevalidationStatus => ({
  effectId: revalidation.effectId,
  tenant: revalidation.tenant,
  mode: revalidation.mode,
  regenerate: revalidation.regenerate,
  state: 'marking',
  pages: 0,
  marked: 0,
  regenerations: 0,
  held: 0,
  heldPages: [],
  acceptedAtMs: atMs,
});

/** The status while tags mark in the background: the path pages' counts, the fan-outs awaited. */
export const markingStatus = (
  accepted: RevalidationStatus,
  effect: Omit<RevalidationEffect, 'cdn'>,
  fanOuts: number,
): RevalidationStatus => ({
  ...accepted,
  state: 'marking',
  pages: effect.pages,
  marked: effect.pages,
  regenerations: effect.regenerations,
  held: effect.held.count,
  heldPages: effect.held.pages,
  fanOuts,
});

/** The status once every page is marked. */
export const doneStatus = (
  accepted: RevalidationStatus,
  effect: RevalidationEffect,
  atMs: number,
): RevalidationStatus => ({
  ...accepted,
  state: 'done',
  pages: effect.pages,
  marked: effect.pages,
  regenerations: effect.regenerations,
  held: effect.held.count,
  heldPages: effect.held.pages,
  doneAtMs: atMs,
});

/** The JSON a status GET answers. */
export const statusJson = (status: RevalidationStatus): { [field: string]: JsonValue } => ({
  effect_id: status.effectId,
  state: status.state,
  mode: status.mode,
  regenerate: status.regenerate,
  tenant: status.tenant ?? null,
  counts: {
    pages: status.pages,
    marked: status.marked,
    regenerations: status.regenerations,
    held: status.held,
    // What it will have marked in all, when tags are marked in the background (see fan-out.ts).
    ...(status.expected === undefined
      ? {}
      : { expected_pages: status.expected.count, expected_exact: status.expected.exact }),
  },
  held_pages: status.heldPages.map((page) => ({ key: page.key, hold_until: page.holdUntil })),
  accepted_at: new Date(status.acceptedAtMs).toISOString(),
  done_at: status.doneAtMs === undefined ? null : new Date(status.doneAtMs).toISOString(),
  // Soft purges: the last deadline purge is due its deadline after the marking is done.
  ...(status.purgeDeadlineSeconds === undefined
    ? {}
    : { cdn: deferredCdnOf(status.purgeDeadlineSeconds, status.doneAtMs) }),
});

const deferredCdnOf = (deadlineSeconds: number, doneAtMs: number | undefined) =>
  deferredJson(
    deadlineSeconds,
    doneAtMs === undefined ? undefined : doneAtMs + deadlineSeconds * 1000,
  );
