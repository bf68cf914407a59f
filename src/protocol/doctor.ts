import { z } from 'zod';

/**
 * What `flowsync doctor` looks at, in the order it prints them: each a reason sync fails without saying so
 * (README, "When sync seems stuck: flowsync doctor").
 */
export const DOCTOR_CHECKS = [
  'data-folder',
  'config',
  'agent',
  'keychain',
  'service',
  'token',
  'clock',
  'watches',
  'repository',
] as const;
export type DoctorCheckName = (typeof DOCTOR_CHECKS)[number];

/**
 * `pass`: nothing to do. `warn`: sync goes on, but something needs you (exit 4). `fail`: sync does not happen, or
 * your data is open to others, until it is fixed (exit 1). `skip`: not looked at, because a check it needs failed
 * (the clock of a service that does not answer).
 */
export const DOCTOR_VERDICTS = ['pass', 'warn', 'fail', 'skip'] as const;
export type DoctorVerdict = (typeof DOCTOR_VERDICTS)[number];

/** One line of `flowsync doctor --json`. */
export const doctorCheckSchema = z.strictObject({
  check: z.enum(DOCTOR_CHECKS),
  verdict: z.enum(DOCTOR_VERDICTS),
  /** The repository folder a `repository` line is about; null for the others. */
  folder: z.string().nullable(),
  /** What was found, in one line. */
  message: z.string(),
  /** What to do about it, in one line; null when nothing needs doing. */
  fix: z.string().nullable(),
});
export type DoctorCheck = z.infer<typeof doctorCheckSchema>;

/** `flowsync doctor --json`: every check, in the order printed. */
export const doctorReportSchema = z.array(doctorCheckSchema);
