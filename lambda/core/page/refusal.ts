/**
 * A render refused for storage, with the answer it got: what serving gives the viewer whose
 * request the render was (issue 31, fix 11), so the page model holds it for both use cases.
 */
import { RenderRefusedError } from '../errors.js';
import type { RenderResult } from './model.js';

/**
 * A refusal that carries the render's whole answer, for the viewer whose request the render was
 * (`deliverableRender`). The answer is private (never enumerated, so never logged): it may hold
 * a cookie the upstream set.
 */
export class AnsweredRefusal extends RenderRefusedError {
  readonly #answer: RenderResult;
  constructor(refusal: RenderRefusedError, answer: RenderResult) {
    super(refusal.reason, refusal.message, refusal.status, {
      cause: refusal.cause,
      trafficClass: refusal.trafficClass,
    });
    this.#answer = answer;
  }
  get answer(): RenderResult {
    return this.#answer;
  }
}

/** The render's answer a refusal carries, if it carries one. */
export const refusedAnswer = (error: RenderRefusedError): RenderResult | undefined =>
  error instanceof AnsweredRefusal ? error.answer : undefined;
