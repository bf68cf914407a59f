import type { DeletionGuard } from '../../../src/sync/safety.ts';
import { SEEDED, ModelCheckout } from './checkout.ts';
import type { Core } from './core.ts';
import { ModelService } from './service.ts';

/*
 * A team: one service and 2-4 checkouts of one repository, all synced at the start. What breaks a rule is written
 * down as a violation (the step it happened at and what happened), never thrown: the history goes on, and the
 * property fails at its end with every violation found.
 */

/** The model's guard: a few files, so that a mass deletion fits a short history (5 files held, not 101). */
export const MODEL_GUARD: DeletionGuard = { files: 3, share: 0.25 };

export interface TeamShape {
  checkouts: number;
  /** Two checkouts carry one writer label (a checkout copied with its state: one machine image, a copied home). */
  sharedLabel: boolean;
}

export class Team {
  readonly service: ModelService;
  readonly checkouts: ModelCheckout[];
  readonly violations: string[] = [];
  /** Every version the service acknowledged to a checkout: path and hash (null: a deletion). */
  readonly acknowledged = new Set<string>();
  /** Versions a restore from an older backup took from the service: no checkout is to blame for them. */
  readonly takenByRestore = new Set<string>();
  step = 0;
  private fresh = 0;

  constructor(
    readonly core: Core,
    shape: TeamShape,
    readonly guard: DeletionGuard = MODEL_GUARD,
  ) {
    const seed = new Map(SEEDED.map((path) => [path, `${path}@0`]));
    this.service = new ModelService(seed);
    this.checkouts = Array.from({ length: shape.checkouts }, (_, index) => {
      const name = 'ABCD'[index]!;
      const writer = shape.sharedLabel && index === 1 ? 'writer-A' : `writer-${name}`;
      return new ModelCheckout(name, writer, this.service.files.size ? currentTree(this.service) : seed);
    });
  }

  /** A content no one wrote before: `A3` is checkout A's third. */
  content(who: ModelCheckout): string {
    this.fresh++;
    return `${who.name}${this.fresh}`;
  }

  violation(rule: string, what: string): void {
    this.violations.push(`step ${this.step}: ${rule}: ${what}`);
  }
}

export function currentTree(service: ModelService): Map<string, string> {
  return new Map([...service.files].map(([path, file]) => [path, file.hash]));
}

export const versionKey = (path: string, hash: string | null) => `${path}@${hash ?? 'deleted'}`;
