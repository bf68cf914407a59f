import {
  ALL_FUNCTIONS,
  type Baggage,
  type FunctionPath,
  type FunctionSpec,
  type ArgsOf,
  type ValueOf,
} from '../protocol/index.ts';

/** A function's args as a caller writes them: `baggage` may be left out, the client fills it in. */
export type CallArgs<P extends FunctionPath> = Omit<ArgsOf<P>, 'baggage'> & { baggage?: Baggage };

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Who writes, for the service's history (see ClientOptions.writer). */
  writer?: string;
}

type Call = <P extends FunctionPath>(
  path: P,
  args: CallArgs<P>,
  options?: CallOptions,
) => Promise<ValueOf<P>>;

/** `client.flowDef.syncBatch(args)` and the like: one method per function, named in the function table. */
export type GroupedMethods = {
  [G in FunctionSpec['group']]: {
    [S in Extract<FunctionSpec, { group: G }> as S['method']]: (
      args: CallArgs<S['path']>,
      options?: CallOptions,
    ) => Promise<ValueOf<S['path']>>;
  };
};

/** Built from the function table, so a function added there is a method here with nothing written by hand. */
export function groupedMethods(call: Call): GroupedMethods {
  const groups: Record<string, Record<string, unknown>> = {};
  for (const spec of ALL_FUNCTIONS) {
    (groups[spec.group] ??= {})[spec.method] = (args: never, options?: CallOptions) =>
      call(spec.path, args, options);
  }
  return groups as GroupedMethods;
}
