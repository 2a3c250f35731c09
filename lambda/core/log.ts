/** Where core code reports what it shrugs off (a failed best-effort delete, a dropped cookie). */
export interface LogSink {
  warn(message: string, extra: Record<string, unknown>): void;
}
