import { systemClock } from '../../core/clock.js';
import type { SecretSource } from '../../core/page/ports.js';

export interface ExtensionSecretOptions {
  /** ARN of the Secrets Manager secret. */
  readonly secretId: string;
  /** The caller's session token, which the extension requires on every request. */
  readonly sessionToken: () => string | undefined;
  /** @default 2773 (the extension's default port) */
  readonly port?: number | undefined;
  /** How long a value is reused in this process before asking the extension again. @default 60 s */
  readonly reuseMs?: number;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** @default systemClock.now */
  readonly now?: () => number;
}

/**
 * A Secrets Manager secret read through the AWS Parameters and Secrets Lambda Extension (a
 * layer the construct adds): a localhost call the extension answers from its cache, refreshing
 * it from Secrets Manager on its own. It keeps the Secrets Manager client (14 KB, and its init)
 * out of the bundle. Rotation reaches the function within `reuseMs` plus the extension's TTL.
 */
export class ExtensionSecretSource implements SecretSource {
  readonly #options: ExtensionSecretOptions;
  readonly #fetch: typeof fetch;
  #cached: { value: string; until: number } | undefined;

  constructor(options: ExtensionSecretOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  async value(): Promise<string> {
    const now = this.#options.now?.() ?? systemClock.now();
    if (this.#cached !== undefined && now < this.#cached.until) return this.#cached.value;
    const url = new URL(`http://localhost:${this.#options.port ?? 2773}/secretsmanager/get`);
    url.searchParams.set('secretId', this.#options.secretId);
    const token = this.#options.sessionToken();
    if (token === undefined) throw new Error('no session token for the secrets extension');
    const response = await this.#fetch(url, {
      headers: { 'x-aws-parameters-secrets-token': token },
      signal: AbortSignal.timeout(2_000),
    });
    if (!response.ok) {
      throw new Error(
        `secrets extension answered ${response.status} for ${this.#options.secretId}`,
      );
    }
    const { SecretString } = (await response.json()) as { SecretString?: unknown };
    if (typeof SecretString !== 'string' || SecretString === '') {
      throw new Error(`secret ${this.#options.secretId} has no string value`);
    }
    this.#cached = { value: SecretString, until: now + (this.#options.reuseMs ?? 60_000) };
    return SecretString;
  }
}
