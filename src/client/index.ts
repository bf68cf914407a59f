// Owns calling a service: one typed `call(path, args)` over undici, auth, baggage, time-outs, retries, and the one
// reader of HTTP status codes (failureKind, reasonOf). May import: protocol.
export { createClient, type ClientOptions, type RemoteClient } from './create-client.ts';
export type { Reply } from './transport.ts';
export type { AuthProvider, ClientAuth, Credentials } from './auth.ts';
export type { CallArgs, CallOptions, GroupedMethods } from './methods.ts';
export { DEFAULT_RETRY, backoffDelay, type RetryOptions } from './retry.ts';
export {
  InvalidArgsError,
  MissingCredentialsError,
  ProtocolError,
  RemoteError,
  RepoConfigTooLargeError,
  TransportError,
} from './errors.ts';
export { checkAccess } from './check-access.ts';
export {
  fromAnotherUser,
  loopbackPeerUid,
  PeerIndex,
  readSocketTables,
  socketOwnersKnown,
} from './listener-owner.ts';
export { SPEC_ONLY, askCapabilities, serviceCapabilities } from './capabilities.ts';
export {
  SIGNED_OUT_RECHECK_MS,
  conflictOf,
  credentialRefusal,
  failureKind,
  repoConfigConflictOf,
  isRetryable,
  reasonOf,
  statusNote,
  type CredentialRefusal,
  type FailureKind,
} from './failure.ts';
