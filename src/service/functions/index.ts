import type { FunctionPath } from '../../protocol/index.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';
import { flowDefFunctions } from './flow-def/index.ts';
import { repoConfigFunctions } from './repo-config.ts';
import { logFunctions } from './logs.ts';
import { cryptoFunctions } from './crypto.ts';
import { trackerFunctions } from './tracker.ts';
import { webhookFunctions } from './webhooks.ts';
import { taskFunctions } from './task.ts';
import { liveFunctions } from './live.ts';
import { memberFunctions } from './members/index.ts';
import { auditFunctions } from './audit.ts';

export { ChangeFeed } from './change-feed.ts';

/** Every implementation, the spec's 20 and the extensions; the type makes a missing one a compile error. */
export function createImplementations(stores: ServiceStores): Implementations<FunctionPath> {
  return {
    ...flowDefFunctions(stores),
    ...liveFunctions(stores),
    ...repoConfigFunctions(stores),
    ...logFunctions(stores),
    ...cryptoFunctions(),
    ...trackerFunctions(stores),
    ...webhookFunctions(stores),
    ...taskFunctions(stores),
    ...memberFunctions(stores),
    ...auditFunctions(stores),
  };
}
