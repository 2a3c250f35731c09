import type { SecretSource } from '../../core/page/ports.js';

/** A secret given as is: local mode and tests. */
export class StaticSecretSource implements SecretSource {
  constructor(readonly secret: string) {}

  value(): Promise<string> {
    return Promise.resolve(this.secret);
  }
}
