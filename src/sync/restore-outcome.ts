/*
 * What a restored version becomes, decided from three hashes (null: no file, a deletion): this
 * checkout's base (what it last acknowledged), the service's current version, and the version written to disk.
 * A restore is its user's edit, sent on this checkout's base; when the service holds another version since, that
 * edit is a conflict to settle (the other writer's version is not written over unseen), and when the version
 * restored is the base itself, nothing would be pending at all: "sent" would be untrue.
 */

/**
 * `sent`: sent as an edit in the next round. `current`: the service holds this version already: nothing to send.
 * `conflict`: the service holds another version than the one last synced here: settled by its user (send this one
 * on top, or take the service's).
 */
export type RestoreOutcome = 'sent' | 'current' | 'conflict';

export interface RestoreFacts {
  /** What this checkout last acknowledged (null: none). */
  base: string | null;
  /** The service's current version (null: deleted or none); undefined: the service did not say. */
  service: string | null | undefined;
  /** The version written to disk (null: a deletion, the file removed). */
  restored: string | null;
}

export function restoreOutcome({ base, service, restored }: RestoreFacts): RestoreOutcome {
  if (service === undefined) return 'sent';
  if (restored === service) return 'current';
  return service === base ? 'sent' : 'conflict';
}
