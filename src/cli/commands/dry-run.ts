import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, configuredRepository, currentBranch, type AgentConfig } from '../../agent/index.ts';
import { defaultStatePath, ensurePrivateFolder } from '../../host/index.ts';
import { plural, printable } from '../../protocol/index.ts';
import { snapshotState, type PlannedFlow } from '../../sync/index.ts';
import { where } from '../where.ts';

/** Files named per flow in a dry run; past it, a count. */
const FILES_SHOWN = 20;

/**
 * `flowsync sync --dry-run`: the plan the uploader would execute, flow by flow, computed by the same planner from a
 * rescan, and nothing changed: the rescan records into a copy of the state in a private temporary folder (removed
 * after), and no call reaches the service.
 */
export async function dryRun(
  folders: readonly string[],
  config: AgentConfig,
  serviceUrl: string | undefined,
  out: (line: string) => void,
): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'flowsync-dry-run-'));
  ensurePrivateFolder(scratch);
  try {
    const statePath = join(scratch, 'state.db');
    snapshotState(defaultStatePath(), statePath);
    const agent = await Agent.open({ config, serviceUrl, statePath });
    try {
      for (const folder of folders) {
        const watched = await agent.addRepository(folder, configuredRepository(config, folder));
        const { identity } = watched;
        const planned = await watched.engine.plan();
        const named = where(identity, currentBranch(identity.root), identity.root);
        out(printable(`${named} with ${agent.serviceUrl}: dry run, nothing sent`));
        for (const line of planLines(planned)) out(printable(line));
      }
    } finally {
      await agent.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The plan in lines: one per flow, its files under it (+ new, ~ changed, - deleted), then a total. */
export function planLines(planned: readonly PlannedFlow[]): string[] {
  if (planned.length === 0) return ['  up to date: nothing to send'];
  const lines: string[] = [];
  let files = 0;
  for (const flow of planned) {
    if (flow.action === 'held') {
      // A root held names itself; deletions held (flowPath '') are the repository's.
      lines.push(
        flow.flowPath === ''
          ? `  ${flow.message ?? 'deletions held'}`
          : `  ${flow.flowPath}: held: ${flow.message ?? 'nothing of it is deleted on the service'}`,
      );
      continue;
    }
    if (flow.action === 'conflict') {
      lines.push(`  ${flow.flowPath}: conflict: ${flow.message ?? 'changed on the service'}; not sent`);
      continue;
    }
    if (flow.action === 'refused') {
      lines.push(`  ${flow.flowPath}: refused by the service as it is: not sent until it changes`);
      continue;
    }
    const counts = [
      [flow.created.length, 'new'],
      [flow.updated.length, 'changed'],
      [flow.deleted.length, 'deleted'],
    ] as const;
    lines.push(`  ${flow.flowPath}: ${counts.map(([n, what]) => `${n} ${what}`).join(', ')}`);
    const named = [
      ...flow.created.map((path) => `+ ${path}`),
      ...flow.updated.map((path) => `~ ${path}`),
      ...flow.deleted.map((path) => `- ${path}`),
    ];
    files += named.length;
    for (const line of named.slice(0, FILES_SHOWN)) lines.push(`    ${line}`);
    if (named.length > FILES_SHOWN) lines.push(`    … and ${named.length - FILES_SHOWN} more`);
  }
  const held = planned.filter((flow) => flow.action !== 'send').length;
  lines.push(
    `  would send ${plural(files, 'file')}` +
      (held > 0 ? `; ${held} not sent (held, refused or in conflict)` : ''),
  );
  return lines;
}
