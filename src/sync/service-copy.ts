import { ProtocolError, RemoteError, type RemoteClient } from '../client/index.ts';
import { LIST_FILES_PAGE_MAX, type MemberRef } from '../protocol/index.ts';
import type { FlowLayout } from './flow-layout.ts';
import { checkServiceFile, contentNotWritable } from './service-answers.ts';

/** A repository as the service knows it, and the layout that says which of the files it names are this checkout's. */
export interface ServiceRepository {
  owner: string;
  name: string;
  layout: FlowLayout;
}

/** A file as the service holds it now, content included. */
export interface ServiceFile {
  hash: string;
  content: string;
}

/** A file the service holds whose content is not written here, and why (larger than a file may be). */
export interface UnwritableServiceFile {
  hash: string;
  why: string;
}

const LIST_FILES = 'svc/flow_def/public/list_files';
const LIST_DELETED = 'svc/flow_def/public/list_deleted';

/**
 * How far one listing is read before it is given up (the service boundary: nothing a service answers decides how
 * much or how long). A listing that always offered another page took a fresh checkout's agent from 246 MB to over
 * 1.3 GB in 60 s, and its window never appeared. 250,000 files is 2.5 times the largest repository the agent is
 * built for (100,000 files: bench/); pages are counted apart, for a service that sends a few files a page.
 */
export const LISTING_LIMITS = { files: 250_000, pages: 5_000, ms: 5 * 60_000, pauseMs: 30 * 60_000 };

/**
 * Listings given up, per client and repository, with the error that said why: for `LISTING_LIMITS.pauseMs` every
 * listing of that repository fails at once with it, without a call. Read again at every retry of a round (the
 * back-off's 60 s at most), a hostile listing of 250,000 files kept the agent at 26-53 % of a core for as long as
 * it ran; now it costs one read per half hour (a read is bounded by `ms`), or one per start of the agent.
 */
const givenUpListings = new WeakMap<RemoteClient, Map<string, { error: ProtocolError; until: number }>>();

/** Reads every page of one listing, within LISTING_LIMITS, handing each file to `take`. */
function eachListedPage(
  client: RemoteClient,
  repo: ServiceRepository,
  flowPath: string | null,
  withContent: boolean,
  take: (file: Awaited<ReturnType<RemoteClient['flowDef']['listFiles']>>['files'][number]) => void,
): Promise<void> {
  return eachPage(
    client,
    LIST_FILES,
    repo,
    flowPath,
    (after) =>
      client.flowDef.listFiles({
        repo_owner: repo.owner,
        repo_name: repo.name,
        ...(flowPath === null ? {} : { flow_path: flowPath }),
        ...(withContent ? { with_content: true } : {}),
        // A flow's files come with their content: a page of 500 files of 1 MiB each is already 500 MiB.
        first: withContent ? 500 : LIST_FILES_PAGE_MAX,
        ...(after === undefined ? {} : { after }),
      }),
    take,
  );
}

/**
 * Reads every page of a listing of files (`list_files`, `list_deleted`), within LISTING_LIMITS: each file checked
 * to be of this checkout (and of `flowPath`, when one flow is listed), none listed twice, a cursor that advances.
 */
async function eachPage<F extends { flow_path: string; path: string }>(
  client: RemoteClient,
  call: string,
  repo: ServiceRepository,
  flowPath: string | null,
  page: (after: string | undefined) => Promise<{ files: F[]; next: string | null }>,
  take: (file: F) => void,
): Promise<void> {
  const repoKey = `${repo.owner}/${repo.name}`;
  const given = givenUpListings.get(client) ?? new Map<string, { error: ProtocolError; until: number }>();
  givenUpListings.set(client, given);
  const before = given.get(repoKey);
  if (before !== undefined && Date.now() < before.until) throw before.error;
  given.delete(repoKey);
  const started = performance.now();
  const cursors = new Set<string>();
  const seen = new Set<string>();
  const givenUp = (why: string) => {
    const until = Date.now() + LISTING_LIMITS.pauseMs;
    const at = new Date(until).toISOString().slice(11, 16);
    const error = new ProtocolError(
      `The service's listing of files ${why}: it was given up, and nothing of it is used; read again after ${at} UTC (or at the agent's next start).`,
      call,
      200,
    );
    given.set(repoKey, { error, until });
    return error;
  };
  let after: string | undefined;
  for (let pages = 1; ; pages++) {
    const { files, next } = await page(after);
    for (const file of files) {
      checkServiceFile(repo.layout, call, file.flow_path, file.path);
      if (flowPath !== null && file.flow_path !== flowPath)
        throw givenUp(`lists ${file.flow_path}/${file.path} in a listing of ${flowPath}`);
      const key = serviceFileKey(file.flow_path, file.path);
      if (seen.has(key)) throw givenUp(`lists ${file.flow_path}/${file.path} twice`);
      seen.add(key);
      take(file);
    }
    if (next === null) return;
    if (cursors.has(next) || next === after)
      throw givenUp('offers a page it has already given (its cursor does not advance)');
    if (seen.size > LISTING_LIMITS.files)
      throw givenUp(`goes on past ${LISTING_LIMITS.files.toLocaleString('en')} files`);
    if (pages >= LISTING_LIMITS.pages)
      throw givenUp(`goes on past ${LISTING_LIMITS.pages.toLocaleString('en')} pages`);
    if (performance.now() - started > LISTING_LIMITS.ms)
      throw givenUp(`takes longer than ${LISTING_LIMITS.ms / 60_000} minutes`);
    cursors.add(next);
    after = next;
  }
}

/** A file whose latest version on the service is a deletion: who deleted it and when. */
export interface DeletedServiceFile {
  flowPath: string;
  path: string;
  deletedAt: string;
  deletedBy: string | null;
}

/**
 * The files of a repository whose latest version on the service is a deletion (`list_deleted`, an extension of
 * flowsync's service; one older than this agent does not know it, and lists none).
 */
export async function listDeletedFiles(
  client: RemoteClient,
  repo: ServiceRepository,
): Promise<DeletedServiceFile[]> {
  const files: DeletedServiceFile[] = [];
  try {
    await eachPage(
      client,
      LIST_DELETED,
      repo,
      null,
      (after) =>
        client.flowDef.listDeleted({
          repo_owner: repo.owner,
          repo_name: repo.name,
          first: LIST_FILES_PAGE_MAX,
          ...(after === undefined ? {} : { after }),
        }),
      (file) =>
        files.push({
          flowPath: file.flow_path,
          path: file.path,
          deletedAt: file.deleted_at,
          deletedBy: file.deleted_by,
        }),
    );
  } catch (error) {
    // A flowsync service older than this agent answers 404: nothing known deleted, as before it.
    if (error instanceof RemoteError && error.statusCode === 404) return [];
    throw error;
  }
  return files;
}

/**
 * What the service holds now of some files of one repository, read with `list_files` (an extension: a service of
 * the spec alone has no read of files), a flow at a time, page by page. A file the service does not have is
 * absent from both maps; one whose content is not written here (over the size a file may be) is in `unwritable`
 * with why. Every file listed is checked to be of this checkout (checkServiceFile), or the whole listing fails.
 */
export async function readServiceFiles(
  client: RemoteClient,
  repo: ServiceRepository,
  files: readonly { flowPath: string; path: string }[],
): Promise<{ found: Map<string, ServiceFile>; unwritable: Map<string, UnwritableServiceFile> }> {
  const found = new Map<string, ServiceFile>();
  const unwritable = new Map<string, UnwritableServiceFile>();
  const wanted = new Map<string, Set<string>>();
  for (const { flowPath, path } of files) {
    const paths = wanted.get(flowPath) ?? new Set<string>();
    paths.add(path);
    wanted.set(flowPath, paths);
  }
  for (const [flowPath, paths] of wanted)
    await eachListedPage(client, repo, flowPath, true, (file) => {
      if (!paths.has(file.path) || file.content === undefined) return;
      const key = serviceFileKey(flowPath, file.path);
      const why = contentNotWritable(file.content);
      if (why === null) found.set(key, { hash: file.hash, content: file.content });
      else unwritable.set(key, { hash: file.hash, why });
    });
  return { found, unwritable };
}

export interface ListedServiceFile {
  flowPath: string;
  path: string;
  hash: string;
  id: string;
  /** The writer's name of its current version (null: not named), and when it was written. */
  writtenBy: string | null;
  writtenAt: string;
  /** The member whose credential wrote it: absent from a service without members. */
  member?: MemberRef | null;
}

/** What the service lists of a repository (or of one flow) now, without content: path, hash and id per file. */
export async function listServiceFiles(
  client: RemoteClient,
  repo: ServiceRepository,
  flowPath: string | null,
): Promise<ListedServiceFile[]> {
  const files: ListedServiceFile[] = [];
  await eachListedPage(client, repo, flowPath, false, (file) =>
    files.push({
      flowPath: file.flow_path,
      path: file.path,
      hash: file.hash,
      id: file.id,
      writtenBy: file.written_by,
      writtenAt: file.updated_at,
      ...(file.member === undefined ? {} : { member: file.member }),
    }),
  );
  return files;
}

export function serviceFileKey(flowPath: string, path: string): string {
  return `${flowPath}\0${path}`;
}
