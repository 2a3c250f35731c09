/** What the end-to-end tests of `npm start` look at from outside: processes and sockets (Linux). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Pids of the DynamoDB Local JVMs whose data lives under `dir`. */
export const javaProcessesFor = (dir: string): number[] =>
  spawnSync('pgrep', ['-f', `DynamoDBLocal.jar.*${dir}`], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number);

/** Parent pid and process group of a live process; undefined once it is gone (or a zombie). */
export function processInfo(pid: number): { ppid: number; pgid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') return undefined;
    return { ppid: Number(ppid), pgid: Number(pgid) };
  } catch {
    return undefined;
  }
}

export const isRunning = (pid: number): boolean => processInfo(pid) !== undefined;

/** `/proc/net/tcp` writes an IPv4 address as 8 hex digits, least significant byte first. */
const ipv4 = (hex: string) =>
  [6, 4, 2, 0].map((at) => parseInt(hex.slice(at, at + 2), 16)).join('.');

/** `/proc/net/tcp6` writes an IPv6 address as four 32-bit words, each little-endian. */
function ipv6(hex: string): string {
  const bytes = [0, 8, 16, 24].flatMap((word) =>
    [6, 4, 2, 0].map((at) => hex.slice(word + at, word + at + 2)),
  );
  const groups = Array.from({ length: 8 }, (_, i) => `${bytes[2 * i]}${bytes[2 * i + 1]}`);
  const text = groups.map((group) => parseInt(group, 16).toString(16)).join(':');
  if (text === '0:0:0:0:0:0:0:0') return '::';
  if (text === '0:0:0:0:0:0:0:1') return '::1';
  if (text.startsWith('0:0:0:0:0:ffff:')) return `::ffff:${ipv4(hex.slice(24))}`;
  return text;
}

/** The local addresses of the sockets listening on TCP `port`, as the kernel reports them. */
export function listeningAddresses(port: number): string[] {
  const LISTEN = '0A';
  const read = (file: string, decode: (hex: string) => string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === LISTEN)
      .map((fields) => (fields[1] ?? '').split(':'))
      .filter(([, hexPort]) => parseInt(hexPort ?? '', 16) === port)
      .map(([hexAddress]) => decode(hexAddress ?? ''));
  return [...read('/proc/net/tcp', ipv4), ...read('/proc/net/tcp6', ipv6)];
}
