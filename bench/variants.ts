/**
 * Variants (issue 22): an RSC variant HIT (`rsc: 1`, the `nextjs` preset's variant headers)
 * against an HTML HIT of the same page, bodies of the same size, measured interleaved in one
 * process on the same backends and clients: what the variant's own key costs on the hit path.
 */
import { htmlPage, ModuleRenderer } from '../lambda/adapters/renderer/module.js';
import { NEXT_VARIANT_HEADERS } from '../lambda/core/settings/presets.js';
import { collecting, deployedOrigin } from '../test/helpers/streaming-origin.js';
import { functionUrlEvent } from '../local/function-url.js';
import { lambdaContext } from '../local/worker-poller.js';
import { scenario, type Backends } from './fixture.js';
import { interleave, ratios, table } from './stats.js';

export interface VariantsResult {
  readonly iterations: number;
  readonly pageBytes: number;
  readonly html: { p50: number; p99: number };
  readonly rsc: { p50: number; p99: number };
  readonly ratio: { p50: number; p99: number };
}

export async function variants(
  backends: Backends,
  iterations: number,
  pageBytes = 20_000,
): Promise<VariantsResult> {
  const s = await scenario(backends);
  const filler = 'x'.repeat(pageBytes);
  // The same bytes for both, so the ratio is the variant's key and row, not its payload.
  const renderer = new ModuleRenderer((request) =>
    request.cacheKey.variant
      ? { ...htmlPage(filler, { revalidateSeconds: 3_600 }), contentType: 'text/x-component' }
      : htmlPage(filler, { revalidateSeconds: 3_600 }),
  );
  const config = { ...s.originConfig };
  const origin = collecting(
    deployedOrigin(
      { ...config, keyPolicy: { ...config.keyPolicy, variants: [...NEXT_VARIANT_HEADERS] } },
      { clients: s.clients, clock: s.clock, renderer },
    ),
  );
  const get = async (headers: Record<string, string>, expect: string, type: RegExp) => {
    const event = functionUrlEvent({
      method: 'GET',
      target: '/page',
      headers: { host: 'bench.local', ...headers },
    });
    const reply = await origin(event, lambdaContext(30_000));
    const contentType = String(reply.headers?.['content-type']);
    if (reply.headers?.['x-isr-cache'] !== expect || !type.test(contentType)) {
      throw new Error(
        `expected ${expect} ${type}, got ${reply.headers?.['x-isr-cache']} ${contentType}`,
      );
    }
  };
  try {
    await get({}, 'MISS', /^text\/html/);
    await get({ rsc: '1' }, 'MISS', /^text\/x-component/);
    const timings = await interleave(
      'variants (RSC HIT vs HTML HIT)',
      {
        html: () => get({}, 'HIT', /^text\/html/),
        rsc: () => get({ rsc: '1' }, 'HIT', /^text\/x-component/),
      },
      iterations,
    );
    return { iterations, pageBytes, ...timings, ratio: ratios(timings.rsc, timings.html) };
  } finally {
    s.destroy();
  }
}

/** The section's table: both HITs and their ratio. */
export function printVariants(r: VariantsResult): void {
  console.log(
    `\nVariants: an RSC variant HIT (rsc: 1, nextjs preset headers) vs an HTML HIT of the same page (${r.iterations} each, ${r.pageBytes}-byte bodies)`,
  );
  console.log(
    table([
      ['', 'p50 ms', 'p99 ms'],
      ['HTML HIT', r.html.p50, r.html.p99],
      ['RSC variant HIT', r.rsc.p50, r.rsc.p99],
      ['ratio (goal <= 1.05)', r.ratio.p50, r.ratio.p99],
    ]),
  );
}
