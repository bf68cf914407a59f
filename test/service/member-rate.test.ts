import { afterAll, beforeAll, expect, it } from 'vitest';
import { memberToken } from '../support/members.ts';
import { callFunction, startTestService, type TestService } from '../support/service.ts';

/**
 * The rate limit per member (issue 48) on a real service, its rate shrunk: one member's flood is answered 429 with
 * Retry-After, and another member's calls meanwhile go through; the shared tokens are not limited.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ memberRate: { perSecond: 2, burst: 5 } });
});
afterAll(async () => {
  await svc.close();
});

const whoami = (authorization: string) =>
  callFunction(svc.url, authorization, 'svc/members/public/whoami', {});

it("one member's flood is refused with 429 and Retry-After; the others are not", async () => {
  const operator = `Admin ${svc.sharedTokens.admin}`;
  const bob = await memberToken(svc.url, operator, 'bob', 'write');
  const alice = await memberToken(svc.url, operator, 'alice', 'write');
  const flood = await Promise.all(Array.from({ length: 30 }, () => whoami(`Bearer ${bob}`)));
  const refused = flood.filter((reply) => reply.statusCode === 429);
  expect(refused.length).toBeGreaterThan(0);
  expect(flood.filter((reply) => reply.statusCode === 200).length).toBeGreaterThanOrEqual(5);
  expect(refused[0]!.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(refused[0]!.body.errorData).toMatchObject({ reason: 'throttled', member: 'bob' });
  expect(refused[0]!.body.errorMessage).toMatch(
    /^bob sent more than 2 calls a second to this service: wait \d+ s/,
  );
  expect((await whoami(`Bearer ${alice}`)).statusCode).toBe(200);
  const shared = await Promise.all(
    Array.from({ length: 30 }, () => whoami(`Bearer ${svc.sharedTokens.user}`)),
  );
  expect(shared.every((reply) => reply.statusCode === 200)).toBe(true);
});
