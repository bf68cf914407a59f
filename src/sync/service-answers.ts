import { ProtocolError } from '../client/index.ts';
import { MAX_FILE_BYTES, printable, unsafePathReason } from '../protocol/index.ts';
import type { FlowLayout } from './flow-layout.ts';

/*
 * The sync layer's half of the service boundary (docs/architecture.md, "The service boundary"). The client has
 * already refused any answer whose paths break the wire's rule (servicePathSchema); what only this checkout knows
 * is checked here, before any path or content a service named reaches the state or the disk: each file is a file
 * of this checkout's flows, a conflict is one of the files the call sent, content is no larger than what is sent.
 * A service's answer that fails is refused whole, as a protocol error naming the path: a hostile or broken service
 * gets nothing written, and a failure worth waiting for (the service may be mended) is what the agent makes of it.
 */

/** Why a file a service named is not one of this checkout's flows, or null when it is. */
export function notOfThisCheckout(layout: FlowLayout, flowPath: string, path: string): string | null {
  const unsafe = unsafePathReason(flowPath) ?? unsafePathReason(path);
  if (unsafe !== null) return unsafe;
  const repoPath = `${flowPath}/${path}`;
  const located = layout.locate(repoPath);
  if (located === null || located.flowPath !== flowPath || located.path !== path)
    return `is not in a flow of this checkout (flow folders: ${layout.roots.join(', ')})`;
  // Never git's folder, at any depth, nor the agent's own (`.flowsync/repo-config.json` goes by its own rules).
  const segments = repoPath.toLowerCase().split('/');
  if (segments.includes('.git')) return "is in a repository's .git";
  if (segments[0] === '.flowsync') return "is flowsync's own folder";
  return null;
}

/** The answer that named a file it should not have, refused whole. */
export function refusedAnswer(fn: string, file: string, why: string): ProtocolError {
  return new ProtocolError(
    `The service's answer to ${fn} names ${printable(file.slice(0, 300))}, which ${why}: the answer is refused and nothing of it is written.`,
    fn,
    200,
  );
}

/** Throws refusedAnswer unless the file a service named is one of this checkout's flows. */
export function checkServiceFile(layout: FlowLayout, fn: string, flowPath: string, path: string): void {
  const why = notOfThisCheckout(layout, flowPath, path);
  if (why !== null) throw refusedAnswer(fn, `${flowPath}/${path}`, why);
}

/**
 * Why the service's content for a file is not written to disk, or null: larger than the agent ever sends (a
 * 100 MB version written into a checkout took the agent to 519 MB, and the next round sent its deletion). That it
 * is the content its hash names the client has checked (contentNotItsHash): an answer where it is not never
 * reaches this layer.
 */
export function contentNotWritable(content: string): string | null {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > MAX_FILE_BYTES)
    return `it is ${Math.ceil(bytes / 1024).toLocaleString('en')} KiB on the service, over the ${MAX_FILE_BYTES / 1024 / 1024} MiB a file may be`;
  return null;
}
