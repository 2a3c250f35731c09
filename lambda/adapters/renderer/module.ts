import type { RenderRequest, Renderer } from '../../core/regenerate/ports.js';
import type { RenderResult } from '../../core/page/model.js';

/** Server-side rendering code that runs in the Lambda itself. */
export type RenderFunction = (request: RenderRequest) => Promise<RenderResult> | RenderResult;

/**
 * Renders in-process: wrap your SSR entry point and pass the renderer to the handler factories.
 * Timeouts, lease loss and error classification are applied by the core around every renderer.
 */
export class ModuleRenderer implements Renderer {
  readonly #render: RenderFunction;

  constructor(render: RenderFunction) {
    this.#render = render;
  }

  async render(request: RenderRequest): Promise<RenderResult> {
    return this.#render(request);
  }
}

/** A 200 HTML page, the common case for a module renderer. */
export const htmlPage = (
  html: string,
  options: { status?: number; revalidateSeconds?: number } = {},
): RenderResult => ({
  status: options.status ?? 200,
  contentType: 'text/html; charset=utf-8',
  body: new TextEncoder().encode(html),
  revalidateSeconds: options.revalidateSeconds,
});
