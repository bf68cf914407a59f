/**
 * How deep a request body may nest, counting the body itself as 1 (flowsync's choice). The service refuses a
 * deeper one with 400 before parsing it: zod's z.json() recurses once a level and overflowed the stack at 5,000
 * levels (measured), which answered 500. No flowsync document comes near 64.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The most a single sync_batch or sync_internal call may carry (flowsync's choice); a call over a cap is
 * refused with 413, the cap in `errorData` (`{limit, max, got}`), and nothing is written. One call is one
 * transaction that holds every other call back: the embedded service stores about 22,000 files a second
 * (bench/service.ts), so 30,000 files is about 1.5 s. The agent's chunks stay well under (src/sync/uploader.ts:
 * 200 flows, 4 MiB estimated at 160 bytes a file or more, so at most 26,215 files; test/sync/chunking.test.ts
 * checks it).
 */
export const SYNC_CALL_LIMITS = {
  flows: 1_000,
  files: 30_000,
  /** UTF-8 bytes of all `content` fields together; under the 8 MiB body limit, so it also holds when that is raised. */
  contentBytes: 6 * 1024 * 1024,
} as const;
export type SyncCallLimit = keyof typeof SYNC_CALL_LIMITS;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
/** Enough of the path to name the field; a chain of keys 64 long would only be noise. */
const SHOWN_PATH = 8;

interface Level {
  object: boolean;
  /** In an array, the index of the current element. */
  index: number;
  /** In an object, where the last key read starts and ends in the text (quotes included). */
  keyStart: number;
  keyEnd: number;
  /** In an object, the next string is a key (after `{` or `,`), not a value. */
  expectKey: boolean;
}

/**
 * Where `text` nests deeper than `maxDepth`, as the path to the field (`['args', 'backend_config']`), or null.
 * One pass over the characters with a stack no deeper than `maxDepth`: no recursion, so no input can overflow it.
 * It only counts brackets outside strings; whether the text is valid JSON is for the parser that runs after it.
 */
export function findDeepNesting(text: string, maxDepth = MAX_JSON_DEPTH): (string | number)[] | null {
  const levels: Level[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const level = levels[levels.length - 1];
    if (c === QUOTE) {
      const start = i;
      i = closingQuote(text, i);
      if (level?.expectKey) Object.assign(level, { keyStart: start, keyEnd: i + 1, expectKey: false });
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (levels.length === maxDepth) return pathTo(text, levels);
      const object = c === OPEN_OBJECT;
      levels.push({ object, index: 0, keyStart: -1, keyEnd: -1, expectKey: object });
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      levels.pop();
    } else if (c === COMMA && level) {
      if (level.object) level.expectKey = true;
      else level.index++;
    }
  }
  return null;
}

/** The index of the quote that closes the string opening at `start` (the last index if it never closes). */
function closingQuote(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end < 0) return text.length - 1;
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
  }
}

/** The keys and indexes down to the last named field; the anonymous array levels below it add nothing. */
function pathTo(text: string, levels: readonly Level[]): (string | number)[] {
  const path = levels.map((level) => (level.object ? keyAt(text, level) : level.index));
  let named = path.length;
  while (named > 0 && typeof path[named - 1] === 'number') named--;
  return path.slice(0, Math.min(named || path.length, SHOWN_PATH));
}

function keyAt(text: string, level: Level): string {
  const raw = text.slice(level.keyStart, level.keyEnd);
  try {
    return String(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/**
 * What one call may carry to any service of the spec: the limits of the platform the spec's API
 * comes from (platform-wire.md section 2: a body of 16 MiB, any array of 8,192 elements, any object of 1,024
 * fields). Over them it refuses the whole call (400 `BadJsonBody`, or "Invalid arguments" in a 200 envelope), so the
 * client checks every call against them before a byte is sent, and the agent cuts its calls under them.
 */
export const SPEC_CALL_LIMITS = {
  bodyBytes: 16 * 1024 * 1024,
  arrayElements: 8_192,
  objectFields: 1_024,
} as const;

/** A place in a value, linked to its parent: built as the walk goes, turned into a path only for the field at fault. */
interface Place {
  key: string | number;
  up: Place | null;
}

/**
 * Where a value goes over SPEC_CALL_LIMITS' arrays or objects: the path to it and what is too many, or null. One
 * walk with an explicit stack (a deep `backend_config` cannot overflow it) that allocates one small record a node.
 */
export function overSpecLimits(value: unknown): { path: (string | number)[]; message: string } | null {
  const stack: { value: unknown; at: Place | null }[] = [{ value, at: null }];
  const count = (n: number) => n.toLocaleString('en-US');
  const pathOf = (at: Place | null) => {
    const path: (string | number)[] = [];
    for (let place = at; place; place = place.up) path.unshift(place.key);
    return path;
  };
  while (stack.length > 0) {
    const { value: item, at } = stack.pop()!;
    if (Array.isArray(item)) {
      if (item.length > SPEC_CALL_LIMITS.arrayElements)
        return {
          path: pathOf(at),
          message: `${count(item.length)} elements, over the ${count(SPEC_CALL_LIMITS.arrayElements)} a service of the spec takes in one array`,
        };
      for (let index = 0; index < item.length; index++) {
        const inner: unknown = item[index];
        if (typeof inner === 'object' && inner !== null)
          stack.push({ value: inner, at: { key: index, up: at } });
      }
    } else if (typeof item === 'object' && item !== null) {
      const keys = Object.keys(item);
      if (keys.length > SPEC_CALL_LIMITS.objectFields)
        return {
          path: pathOf(at),
          message: `${count(keys.length)} fields, over the ${count(SPEC_CALL_LIMITS.objectFields)} a service of the spec takes in one object`,
        };
      for (const key of keys) {
        const inner = (item as Record<string, unknown>)[key];
        if (typeof inner === 'object' && inner !== null) stack.push({ value: inner, at: { key, up: at } });
      }
    }
  }
  return null;
}
