import { makeRepo, type TestRepo } from './repo.ts';
import { initGit } from './window.ts';

/** The first bytes of a PNG: a NUL among them makes it binary, as every image is. */
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000010000000100806000000' + '1ff3ff610000000049454e44ae426082',
  'hex',
);

/**
 * A repository as a newcomer has one: YAML, JSON and Markdown flows, a PNG, a 2 MiB data file and a
 * `.gitignore`'d secret. On the Sync screen: 3 flows, 9 files, 2 not sent (the PNG and the big file).
 */
export function makeSampleRepo(): TestRepo {
  const repo = makeRepo({
    '.gitignore': '.env\n',
    'flows/onboarding/flow.yaml': 'name: onboarding\nsteps:\n  - welcome\n  - profile\n',
    'flows/onboarding/README.md': '# Onboarding\n\nGreets a new user and asks for a profile.\n',
    'flows/onboarding/steps.json': '{"welcome": {"next": "profile"}, "profile": {"next": null}}\n',
    'flows/billing/flow.yaml': 'name: billing\nschedule: "0 3 * * *"\n',
    'flows/billing/schema.json': '{"type": "object", "required": ["amount"]}\n',
    'flows/billing/logo.png': PNG,
    'flows/billing/sample-data.json': `[${'"0123456789abcdef",'.repeat(110_400)}"end"]\n`,
    'flows/billing/.env': 'STRIPE_KEY=sk_live_not_a_real_one\n',
    'flows/reports/flow.yaml': 'name: reports\n',
    'flows/reports/query.md': 'Monthly revenue by plan.\n',
  });
  initGit(repo);
  return repo;
}

export const SAMPLE_COUNTS = '3 flows · 9 files · 0 pending · 2 not sent';
