/**
 * Regeneration messages as model-check actors: each planned message delivered (duplicates side
 * by side, in any order) to the real worker (`processMessage`), with the faults its delivery
 * plans; and, once the faults stop, delivered again until every one is done.
 */
import type { CacheKey } from '../../lambda/core/page/model.js';
import { encodeIntent, parseIntent } from '../../lambda/core/page/intent.js';
import { processMessage } from '../../lambda/core/worker/process-message.js';
import type { MessageReport } from '../../lambda/core/worker/deps.js';
import type { Actors, RunScope } from './actors.js';
import type { MessagePlan } from './plan.js';
import { otherTenant } from './tenants.js';

export interface QueuedMessage {
  readonly id: string;
  readonly body: string;
}

/**
 * Starts every delivery of the plan's messages. The first key's unforced messages observed its
 * seeded generation. @returns the messages (the quiet phase adds the intents origins queued),
 * each one's reports, and whether a message is done (a delivery not asking for a retry)
 */
export function startMessages(
  scope: RunScope,
  actors: Actors,
  run: {
    readonly runId: string;
    readonly keys: readonly CacheKey[];
    readonly seeded: number;
    readonly plans: readonly MessagePlan[];
  },
) {
  const { keys } = run;
  const messages: QueuedMessage[] = run.plans.map((message, index) => {
    const key = keys[message.key % keys.length];
    const observed = key === keys[0] && !message.forced ? { observedGeneratedAt: run.seeded } : {};
    // Negative control: the message names the other tenant (its worker acts for the key's).
    const crossed = scope.mutation === 'worker-crossed-tenant' && key.tenant !== undefined;
    const tenant = crossed ? otherTenant(key.tenant) : key.tenant;
    return {
      id: `m${index}-${run.runId}`,
      body: encodeIntent({
        v: 1,
        ...(tenant === undefined ? {} : { tenant }),
        path: key.path,
        query: '',
        deployId: scope.context.workerConfig.deployId,
        ...observed,
      }),
    };
  });
  const reports = new Map<string, MessageReport[]>();
  const record = (messageId: string, report: MessageReport | undefined) => {
    if (report !== undefined) reports.set(messageId, [...(reports.get(messageId) ?? []), report]);
  };
  run.plans.forEach((message, m) => {
    const { id, body } = messages[m];
    message.deliveries.forEach((delivery, d) => {
      const actor = `w${m}.${d}`;
      scope.tenantWatch?.expect(actor, keys[message.key % keys.length].tenant);
      const deps = actors.worker(actor, delivery, delivery.remainingMs, id);
      void scope.interleaver
        .start(actor, () =>
          processMessage(deps, { messageId: id, body, receiveCount: d + 1, groupId: 'g' }),
        )
        .then((report) => record(id, report as MessageReport | undefined));
    });
  });
  const done = (id: string) => (reports.get(id) ?? []).some((report) => report.action !== 'retry');
  /** One more delivery of `message` by `actor`, outside the schedule (no faults). */
  const redeliver = async (actor: string, message: QueuedMessage, receiveCount?: number) => {
    scope.tenantWatch?.expect(actor, parseIntent(message.body).tenant);
    const deps = actors.worker(actor, { skew: 0 }, 60_000, message.id);
    const report = await processMessage(deps, {
      messageId: message.id,
      body: message.body,
      receiveCount: receiveCount ?? (reports.get(message.id)?.length ?? 0) + 1,
      groupId: 'g',
    });
    if (receiveCount === undefined) record(message.id, report);
    return report;
  };
  const actorNames = run.plans.flatMap((m, i) => m.deliveries.map((_, d) => `w${i}.${d}`));
  return { messages, reports, done, redeliver, actors: actorNames };
}
export type Messages = ReturnType<typeof startMessages>;
