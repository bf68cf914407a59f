import { FILE_SIDE_SQL, IS_DELETION_SQL, wantedOnServiceSql } from './three-way.ts';
import { HELD_BY_GIT_SQL } from './state-motions.ts';

// The SQL terms the state's statements share (state.ts, state-counts.ts): each rule said once.

export const FILE_COLUMNS = `flow_path AS flowPath, path, size, mtime_ms AS mtimeMs, local_hash AS localHash, warning,
  acked_hash AS ackedHash, file_id AS fileId`;
/**
 * A file is pending when what should be on the service (three-way.ts: its hash; nothing once gone from disk; what
 * the service has while it is on disk but not sent) is not what is.
 */
export const DIFFERS = `${wantedOnServiceSql()} IS NOT acked_hash`;
/** In conflict: its user settles it; not sent, not counted as pending (counted as a conflict). */
export const IN_CONFLICT = `EXISTS (SELECT 1 FROM conflicts c WHERE c.repo_id = files.repo_id AND c.flow_path = files.flow_path
  AND c.path = files.path)`;
export const PENDING = `(${DIFFERS} AND NOT ${IN_CONFLICT} AND NOT ${HELD_BY_GIT_SQL})`;
/** A deletion a round would send (three-way.ts's isDeletion), unless held: its user settles a conflict first. */
export const WAITING_DELETION = `${IS_DELETION_SQL} AND NOT ${IN_CONFLICT} AND NOT ${HELD_BY_GIT_SQL}`;
/** The conflicts rows with their files row: the three sides of each (three-way.ts's fileSide, in FILE_SIDE_SQL). */
export const SIDES = `conflicts c LEFT JOIN files f ON f.repo_id = c.repo_id AND f.flow_path = c.flow_path AND f.path = c.path`;
/** A files row whose service side is `side` (behind, conflict), by the conflicts row of it. */
export const SIDE_IS = (side: string) => `EXISTS (SELECT 1 FROM ${SIDES} WHERE c.repo_id = files.repo_id
  AND c.flow_path = files.flow_path AND c.path = files.path AND ${FILE_SIDE_SQL} = '${side}')`;
/**
 * A refused flow still refused: one with a file on disk or on the service. A flow removed from disk before the
 * service ever took it has nothing left to send or to refuse (else it stays "1 refused" forever).
 */
export const LIVE_REJECTION = `EXISTS (SELECT 1 FROM files f WHERE f.repo_id = r.repo_id AND f.flow_path = r.flow_path
  AND (f.local_hash IS NOT NULL OR f.acked_hash IS NOT NULL))`;
/** A file gone from disk: nothing of it is known any more but what the service acknowledged. */
export const GONE = 'local_hash = NULL, size = NULL, mtime_ms = NULL, warning = NULL';
/** Flows with a pending file, and flows sent but not answered (their content on the service is unknown). */
export const PENDING_FLOWS = `SELECT flow_path FROM files WHERE repo_id = @repoId AND ${PENDING}
  UNION SELECT flow_path FROM in_flight WHERE repo_id = @repoId`;
