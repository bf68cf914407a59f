import { z } from 'zod';
import { baggageSchema, isoTimeSchema } from './common.ts';

const taskKey = z.string().min(1).max(100);
const email = z.email().max(320);
const remoteUrl = z.string().min(1).max(2000);

/** A task: a tracker issue brought into the service by `sync_task`, keyed by its identifier (`ENG-123`). */
export const taskRecordSchema = z.looseObject({
  task_key: z.string(),
  title: z.string(),
  status: z.string().nullable(),
  priority: z.string().nullable(),
  repo_remote_url: z.string().nullable(),
  user_email: z.string().nullable(),
  parent_key: z.string().nullable(),
  team_id: z.string().nullable(),
  tracker_issue_id: z.string(),
  created_at: isoTimeSchema,
  updated_at: isoTimeSchema,
});
export type TaskRecord = z.infer<typeof taskRecordSchema>;

export const taskUpdateArgsSchema = z
  .strictObject({
    baggage: baggageSchema,
    task_key: taskKey,
    priority: z.string().trim().min(1).max(100).optional(),
    recursive: z.boolean().optional(),
    repo_remote_url: remoteUrl.optional(),
    status: z.string().trim().min(1).max(100).optional(),
    user_email: email.optional(),
  })
  .refine((args) => args.status !== undefined || args.priority !== undefined, {
    message: 'Give a status, a priority, or both',
    path: ['status'],
  });
/** The task after the update, and the keys of every task changed (itself and, with `recursive`, descendants). */
export const taskUpdateValueSchema = z.looseObject({
  task: taskRecordSchema,
  updated: z.array(z.string()),
});

export const syncTaskArgsSchema = z.strictObject({
  baggage: baggageSchema,
  task_key: taskKey,
  repo_remote_url: remoteUrl,
  user_email: email,
});
/** The task and the keys of its sub-tasks brought in with it. */
export const syncTaskValueSchema = z.looseObject({
  task: taskRecordSchema,
  synced: z.array(z.string()),
});

export const getByTaskKeyArgsSchema = z.strictObject({
  baggage: baggageSchema,
  task_key: taskKey,
  team_external_id: z.string().min(1).max(200),
});
