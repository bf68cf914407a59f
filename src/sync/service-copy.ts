import type { RemoteClient } from '../client/index.ts';
import { LIST_FILES_PAGE_MAX } from '../protocol/index.ts';

/** A file as the service holds it now, content included. */
export interface ServiceFile {
  hash: string;
  content: string;
}

/**
 * What the service holds now of some files of one repository, read with `list_files` (an extension: a service of
 * the spec alone has no read of files), a flow at a time, page by page. A file the service does not have is
 * absent from the map. Pages of 500 files: a flow's files come with their content, and a page of the maximum
 * 5,000 files of 6 MiB each is not something to hold in memory to take back a few.
 */
export async function readServiceFiles(
  client: RemoteClient,
  repo: { owner: string; name: string },
  files: readonly { flowPath: string; path: string }[],
): Promise<Map<string, ServiceFile>> {
  const found = new Map<string, ServiceFile>();
  const wanted = new Map<string, Set<string>>();
  for (const { flowPath, path } of files) {
    const paths = wanted.get(flowPath) ?? new Set<string>();
    paths.add(path);
    wanted.set(flowPath, paths);
  }
  for (const [flowPath, paths] of wanted) {
    let after: string | undefined;
    do {
      const page = await client.flowDef.listFiles({
        repo_owner: repo.owner,
        repo_name: repo.name,
        flow_path: flowPath,
        with_content: true,
        first: Math.min(500, LIST_FILES_PAGE_MAX),
        ...(after === undefined ? {} : { after }),
      });
      for (const file of page.files)
        if (file.flow_path === flowPath && paths.has(file.path) && file.content !== undefined)
          found.set(serviceFileKey(flowPath, file.path), { hash: file.hash, content: file.content });
      after = page.next ?? undefined;
    } while (after !== undefined);
  }
  return found;
}

export interface ListedServiceFile {
  flowPath: string;
  path: string;
  hash: string;
  id: string;
  /** The writer's name of its current version (null: not named), and when it was written. */
  writtenBy: string | null;
  writtenAt: string;
}

/** What the service lists of a repository (or of one flow) now, without content: path, hash and id per file. */
export async function listServiceFiles(
  client: RemoteClient,
  repo: { owner: string; name: string },
  flowPath: string | null,
): Promise<ListedServiceFile[]> {
  const files: ListedServiceFile[] = [];
  let after: string | undefined;
  do {
    const page = await client.flowDef.listFiles({
      repo_owner: repo.owner,
      repo_name: repo.name,
      ...(flowPath === null ? {} : { flow_path: flowPath }),
      first: LIST_FILES_PAGE_MAX,
      ...(after === undefined ? {} : { after }),
    });
    for (const file of page.files)
      files.push({
        flowPath: file.flow_path,
        path: file.path,
        hash: file.hash,
        id: file.id,
        writtenBy: file.written_by,
        writtenAt: file.updated_at,
      });
    after = page.next ?? undefined;
  } while (after !== undefined);
  return files;
}

export function serviceFileKey(flowPath: string, path: string): string {
  return `${flowPath}\0${path}`;
}
