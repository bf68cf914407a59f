import { createRequire } from 'node:module';
import type { createTwoFilesPatch as CreatePatch } from 'diff';
import type { RemoteClient } from '../client/index.ts';
import {
  FILE_VERSIONS_PAGE_MAX,
  MAX_FILE_BYTES,
  type FileVersion,
  type HistoryPurge,
} from '../protocol/index.ts';
import { readContained } from './contained-fs.mjs';
import { NotWritten } from './contained-write.ts';
import { contentNotWritable, refusedAnswer } from './service-answers.ts';

const require = createRequire(import.meta.url);

/**
 * What the window shows of a file's text, at most: a flow file may be 6 MiB, and a diff of two such is seconds of
 * CPU and a page no one reads. Larger sides are named with their size and left to `flowsync history`/`restore`.
 */
export const SHOWN_MAX_BYTES = 512 * 1024;

/** A diff is cut after this many lines, with the count of the rest. */
const DIFF_MAX_LINES = 2_000;

interface RepositoryName {
  owner: string;
  name: string;
}

/** A version number that is not one of this file's (another file's, another repository's, or none). */
export class VersionNotOfFile extends Error {
  override readonly name = 'VersionNotOfFile';
  constructor(version: number, file: string) {
    super(`version ${version} is not a version of ${file}: \`flowsync history ${file}\` lists them`);
  }
}

/**
 * How many versions of one file are read at most (pages of FILE_VERSIONS_PAGE_MAX): a file written every minute
 * has 43,200 versions in the 30 days a service keeps them, and a service that always offers another page must not
 * hold the agent. Past it, the newest are shown and the history says it goes on.
 */
export const HISTORY_LIMITS = { versions: 50_000, pages: 100 };

/**
 * Every version the service keeps of a file (newest first), deletions included, read page by page (a service that
 * does not page sends them all at once), up to HISTORY_LIMITS; `until` stops at the page holding that version.
 */
export async function fileVersions(
  client: RemoteClient,
  repo: RepositoryName,
  flowPath: string,
  path: string,
  until?: number,
): Promise<FileVersion[]> {
  const versions: FileVersion[] = [];
  let after: string | undefined;
  for (let pages = 1; pages <= HISTORY_LIMITS.pages; pages++) {
    const answer = await client.flowDef.fileVersions({
      repo_owner: repo.owner,
      repo_name: repo.name,
      flow_path: flowPath,
      path,
      first: FILE_VERSIONS_PAGE_MAX,
      ...(after === undefined ? {} : { after }),
    });
    if (answer.flow_path !== flowPath || answer.path !== path)
      throw refusedAnswer(
        'svc/flow_def/public/file_versions',
        `${answer.flow_path}/${answer.path}`,
        `is not ${flowPath}/${path}, whose history was asked for`,
      );
    // Newest first, each page older than the one before: a page that is not is a cursor that did not advance.
    const oldest = versions.at(-1)?.version ?? Number.POSITIVE_INFINITY;
    if (answer.versions.some((v) => v.version >= oldest)) return versions;
    versions.push(...answer.versions);
    const next = answer.next ?? null;
    if (next === null || next === after || versions.length >= HISTORY_LIMITS.versions) return versions;
    if (until !== undefined && answer.versions.some((v) => v.version <= until)) return versions;
    after = next;
  }
  return versions;
}

/**
 * The content of one version of this file (null: the version is a deletion). The service reads a version by its
 * number alone, so the number is first found in this file's own history: a number of another repository's file
 * with the same path is refused, not written into this checkout.
 */
export async function versionText(
  client: RemoteClient,
  repo: RepositoryName,
  flowPath: string,
  path: string,
  version: number,
): Promise<{ content: string | null; hash: string | null; current: FileVersion | null }> {
  const file = `${flowPath}/${path}`;
  const versions = await fileVersions(client, repo, flowPath, path, version);
  // The file's current version on the service, when the service marks it so (a conflict copy kept since is newer).
  const current = versions.find((v) => v.current) ?? null;
  const found = versions.find((v) => v.version === version);
  if (!found) throw new VersionNotOfFile(version, file);
  // Not even read when the history says it is larger than a file may be: a 100 MB version took the agent to 519 MB.
  if (found.size > MAX_FILE_BYTES)
    throw new NotWritten(
      file,
      `version ${version} is ${kib(found.size)}, over the ${MAX_FILE_BYTES / 1024 / 1024} MiB a file may be`,
    );
  const kept = await client.flowDef.versionContent({ version });
  if (kept.flow_path !== flowPath || kept.path !== path)
    throw refusedAnswer(
      'svc/flow_def/public/version_content',
      `${kept.flow_path}/${kept.path}`,
      `is not ${file}, whose version ${version} was asked for`,
    );
  const why = kept.content === null ? null : contentNotWritable(kept.content);
  if (why !== null) throw new NotWritten(file, why);
  return { content: kept.content, hash: found.hash, current };
}

/** As versionText, for a page: a version larger than SHOWN_MAX_BYTES is not read, and `tooLarge` says so. */
export async function versionToShow(
  client: RemoteClient,
  repo: RepositoryName,
  flowPath: string,
  path: string,
  version: number,
): Promise<{ content: string | null; tooLarge: string | null }> {
  const versions = await fileVersions(client, repo, flowPath, path, version);
  const found = versions.find((v) => v.version === version);
  if (!found) throw new VersionNotOfFile(version, `${flowPath}/${path}`);
  if (found.size > SHOWN_MAX_BYTES)
    return {
      content: null,
      tooLarge: `version ${version} is ${kib(found.size)}, too large to show here: restore it to read it`,
    };
  const kept = await client.flowDef.versionContent({ version });
  return { content: kept.content, tooLarge: null };
}

/** One side of a comparison: its text, or why it is not shown. */
export type Side = { text: string } | { missing: string };

/**
 * A conflict's three sides: the version this checkout last synced (its base), the service's and the disk's. The
 * base and the service's come from the history; the disk's is read by the containment rule. A side that is a
 * deletion is empty text (the diff shows every line removed).
 */
export async function conflictSides(
  client: RemoteClient,
  repo: RepositoryName & { root: string },
  conflict: { flowPath: string; path: string; baseHash: string | null; serviceHash: string | null },
): Promise<{ base: Side; service: Side; disk: Side }> {
  const versions = await fileVersions(client, repo, conflict.flowPath, conflict.path);
  const byHash = async (hash: string | null, what: string): Promise<Side> => {
    if (hash === null) return { text: '' };
    const version = versions.find((v) => v.hash === hash);
    if (!version) return { missing: `${what} is no longer in the service's history` };
    if (version.size > SHOWN_MAX_BYTES)
      return { missing: `${what} is too large to show here (${kib(version.size)})` };
    const kept = await client.flowDef.versionContent({ version: version.version });
    return { text: kept.content ?? '' };
  };
  return {
    base: await byHash(conflict.baseHash, 'the version last synced here'),
    service: await byHash(conflict.serviceHash, "the service's version"),
    disk: diskSide(repo.root, `${conflict.flowPath}/${conflict.path}`),
  };
}

function diskSide(root: string, relative: string): Side {
  const read = readContained(root, relative, SHOWN_MAX_BYTES);
  if (read.missing) return { text: '' };
  if (read.unreadable) return { missing: `the file here could not be read (${read.code})` };
  if (read.warning) return { missing: `the file here is a ${read.warning}, never read` };
  if (read.bytes === null) return { missing: `the file here is too large to show (${kib(read.size)})` };
  return { text: read.bytes.toString('utf8') };
}

/** A unified diff from one side to another (git's format; '' when they are the same), or why there is none. */
export type SideDiff = { diff: string } | { missing: string };

export function sideDiff(
  file: string,
  from: { side: Side; label: string },
  to: { side: Side; label: string },
): SideDiff {
  if ('missing' in from.side) return { missing: from.side.missing };
  if ('missing' in to.side) return { missing: to.side.missing };
  // diff (its CommonJS build) loaded when a diff is made, not with the modules beside this one: `flowsync status`
  // loaded it with the agent it opens for its look, 25 ms of CPU.
  const { createTwoFilesPatch } = require('diff') as { createTwoFilesPatch: typeof CreatePatch };
  const patch = createTwoFilesPatch(
    `${file} (${from.label})`,
    `${file} (${to.label})`,
    from.side.text,
    to.side.text,
    undefined,
    undefined,
    { context: 3 },
  );
  // createTwoFilesPatch opens with a line of '=' (and "Index:" when both names are one): kept are ---/+++ and hunks.
  const lines = patch.split('\n').filter((line) => !/^(=+|Index: .*)$/.test(line));
  if (lines.at(-1) === '') lines.pop();
  if (!lines.some((line) => line.startsWith('@@'))) return { diff: '' }; // the same text
  if (lines.length <= DIFF_MAX_LINES) return { diff: lines.join('\n') };
  const rest = lines.length - DIFF_MAX_LINES;
  return { diff: `${lines.slice(0, DIFF_MAX_LINES).join('\n')}\n… ${rest} more lines` };
}

function kib(bytes: number): string {
  return `${Math.ceil(bytes / 1024).toLocaleString('en')} KiB`;
}

/**
 * What a file's history says besides its versions, in one call of one version: what operators purged of it (newest
 * first; none from a service that cannot purge), and when the size cap last removed older versions of the
 * repository (null: never, or not said).
 */
export async function historyNotes(
  client: RemoteClient,
  repo: RepositoryName,
  flowPath: string,
  path: string,
): Promise<{ purges: HistoryPurge[]; capped: { at: string; capBytes: number } | null }> {
  const { purges, capped } = await client.flowDef.fileVersions({
    repo_owner: repo.owner,
    repo_name: repo.name,
    flow_path: flowPath,
    path,
    first: 1,
  });
  return { purges: purges ?? [], capped: capped ? { at: capped.at, capBytes: capped.cap_bytes } : null };
}

/**
 * An operator's purge of a file's past versions, all or one (`flowsync history purge`): purge_history, an
 * extension only flowsync's own service has, called with the admin token.
 */
export async function purgeHistory(
  client: RemoteClient,
  repo: RepositoryName & { writer?: string },
  flowPath: string,
  path: string,
  version?: number,
): Promise<HistoryPurge> {
  // Named as this checkout's writes are (`ada@laptop:~/code/app`): the tombstone says who purged.
  const answer = await client.flowDef.purgeHistory(
    {
      repo_owner: repo.owner,
      repo_name: repo.name,
      flow_path: flowPath,
      path,
      ...(version !== undefined && { version }),
    },
    repo.writer === undefined ? {} : { writer: repo.writer },
  );
  if (answer.flow_path !== flowPath || answer.path !== path)
    throw refusedAnswer(
      'svc/flow_def/private/purge_history',
      `${answer.flow_path}/${answer.path}`,
      `is not ${flowPath}/${path}, whose history was purged`,
    );
  return answer.purge;
}
