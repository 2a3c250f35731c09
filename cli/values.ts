/** Reading one parsed command-line value (`node:util` parseArgs) as the type a command wants. */
import type { Values } from './commands.js';

/** The option's string, or undefined when it was not given (or given as a flag). */
export const str = (values: Values, name: string): string | undefined => {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
};
