/** What a process (and its children) costs, read from /proc as `top` would: Linux only, as the benches are. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString());

function stat(pid: number): string[] | null {
  try {
    // The command name may hold spaces; the fields after it are fixed.
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  } catch {
    return null; // gone
  }
}

/** `pid` and every descendant still alive (Syncthing's monitor and the process it runs, say). */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = stat(Number(entry));
    if (!fields) continue;
    const ppid = Number(fields[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]!) ?? []));
  return tree;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Resident memory now, in MB, summed over the processes. */
export const rssMb = (pids: number[]) => pids.reduce((sum, pid) => sum + statusKb(pid, 'VmRSS'), 0) / 1024;

/** Each process's resident high-water mark (VmHWM), in MB, summed: an upper bound of the tree's peak. */
export const peakRssMb = (pids: number[]) =>
  pids.reduce((sum, pid) => sum + statusKb(pid, 'VmHWM'), 0) / 1024;

/** CPU time used so far (user + system), in seconds, summed over the processes. */
export const cpuSeconds = (pids: number[]) =>
  pids.reduce((sum, pid) => {
    const fields = stat(pid);
    return sum + (fields ? Number(fields[11]) + Number(fields[12]) : 0);
  }, 0) / CLOCK_TICKS_PER_SECOND;

/** The 1-minute load average, for a table's header: a number above the core count means the timings are suspect. */
export const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!;

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const target = execFileSync('readlink', [`/proc/${pid}/fd/${fd}`]).toString();
        const inode = /socket:\[(\d+)\]/.exec(target)?.[1];
        if (inode) inodes.add(inode);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // gone
  }
  return inodes;
}

const LOOPBACK_OR_UNSET = /^(0100007F|00000000|0{24}0{8}|0{24}01000000|0{16}FFFF00000100007F)$/i;

/**
 * The processes' TCP/UDP sockets whose local or remote address is neither loopback nor unset: anything that could
 * carry traffic off the machine. Each as "proto local -> remote" in /proc/net's hex notation.
 */
export function offMachineSockets(pids: number[]): string[] {
  const inodes = new Set(pids.flatMap((pid) => [...socketInodes(pid)]));
  const found: string[] = [];
  for (const proto of ['tcp', 'tcp6', 'udp', 'udp6']) {
    const lines = readFileSync(`/proc/${pids[0]}/net/${proto}`, 'utf8').trim().split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (!inodes.has(fields[9]!)) continue;
      const [local, remote] = [fields[1]!.split(':')[0]!, fields[2]!.split(':')[0]!];
      if (!LOOPBACK_OR_UNSET.test(local) || !LOOPBACK_OR_UNSET.test(remote))
        found.push(`${proto} ${fields[1]} -> ${fields[2]}`);
    }
  }
  return found;
}
