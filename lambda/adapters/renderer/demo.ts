import type { Clock } from '../../core/clock.js';
import type { RenderCounter, RenderRequest, Renderer } from '../../core/regenerate/ports.js';
import type { RenderResult } from '../../core/page/model.js';
import { htmlPage } from './module.js';

export interface DemoRendererOptions {
  readonly counter: RenderCounter;
  readonly clock: Clock;
  readonly revalidateSeconds: number;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page `npm start` serves when no upstream is configured: it shows the path, when it was
 * generated and how often it has been rendered, also as `<meta name="isr-render-count">` so
 * scripts can read it.
 */
export class DemoRenderer implements Renderer {
  readonly #options: DemoRendererOptions;

  constructor(options: DemoRendererOptions) {
    this.#options = options;
  }

  async render({ cacheKey }: RenderRequest): Promise<RenderResult> {
    const count = await this.#options.counter.increment(cacheKey);
    const generatedAt = new Date(this.#options.clock.now()).toISOString();
    const target = escapeHtml(decodeURI(cacheKey.key));
    const revalidate = this.#options.revalidateSeconds;
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="isr-render-count" content="${count}">
<meta name="isr-generated-at" content="${generatedAt}">
<title>ISR demo: ${target}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}code{background:#eee;padding:0 .25rem}</style>
</head>
<body>
<h1><code>${target}</code></h1>
<p>Generated at <time datetime="${generatedAt}">${generatedAt}</time>.</p>
<p>This page has been rendered <strong id="render-count">${count}</strong> time${count === 1 ? '' : 's'}.</p>
<p>It stays fresh for ${revalidate} s. After that the next request gets this copy at once
(<code>x-isr-cache: STALE</code>) while one regeneration runs in the background.</p>
</body>
</html>
`;
    // Tagged like a CMS would tag its pages: `demo`, and the section (`demo:blog` for /blog/x).
    const section = cacheKey.path.split('/')[1] || 'home';
    return {
      ...htmlPage(html, { revalidateSeconds: revalidate }),
      tags: ['demo', `demo:${section}`],
    };
  }
}
