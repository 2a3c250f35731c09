/**
 * What `npm start` prints once it serves: what renders (and the preset that shaped its
 * defaults), then the ready line with a first request that exists: the demo's /hello, or the
 * upstream's home page (issue 35, item 10: /hello is no page of a Next.js app).
 */
export interface ReadyInput {
  readonly url: string;
  readonly renderOriginUrl: string | undefined;
  readonly defaultRevalidateSeconds: number;
  readonly preset: string | undefined;
}

export function readyLines(input: ReadyInput): { renderer: string; ready: string } {
  const preset = input.preset?.trim() ? ` (preset ${input.preset.trim()})` : '';
  const renderer =
    input.renderOriginUrl ?? `demo renderer (revalidate ${input.defaultRevalidateSeconds} s)`;
  const first = input.renderOriginUrl === undefined ? '/hello' : '/';
  return {
    renderer: `rendering with: ${renderer}${preset}`,
    ready: `ISR ready on ${input.url}  try: curl -i ${input.url}${first}`,
  };
}
