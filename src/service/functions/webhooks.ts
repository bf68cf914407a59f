import {
  trackerWebhookBodySchema,
  webhookAttachmentBodySchema,
  webhookIssueDataSchema,
  webhookProjectDataSchema,
  webhookUserDataSchema,
  type TrackerWebhookBody,
} from '../../protocol/index.ts';
import { CallRefused } from '../errors.ts';
import { TrackerIssues } from '../store/tracker-issues.ts';
import { TrackerProjects } from '../store/tracker-projects.ts';
import { TrackerUsers } from '../store/tracker-users.ts';
import { WebhookEvents } from '../store/webhook-events.ts';
import { parsePayload } from './parse-payload.ts';
import type { Sql } from '../db/open.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';

type WebhookPath = 'wh/tracker/private/store_webhook' | 'wh/tracker/private/handle_attachment_update';

export function webhookFunctions({ db }: ServiceStores): Implementations<WebhookPath> {
  /** Applies what the tracker store keeps (issues, projects, users); returns false for other types. */
  async function apply(sql: Sql, { action, type, data }: TrackerWebhookBody, team: string): Promise<boolean> {
    switch (type) {
      case 'Issue': {
        const issues = new TrackerIssues(sql);
        if (action === 'remove') await issues.remove(data.id);
        else await issues.save(parsePayload(webhookIssueDataSchema, data, 'an Issue'), team || null);
        return true;
      }
      case 'Project': {
        const projects = new TrackerProjects(sql);
        if (action === 'remove') await projects.remove(data.id);
        else await projects.save(parsePayload(webhookProjectDataSchema, data, 'a Project'));
        return true;
      }
      case 'User': {
        const users = new TrackerUsers(sql);
        if (action === 'remove') await users.remove(data.id);
        else await users.save(parsePayload(webhookUserDataSchema, data, 'a User'));
        return true;
      }
      default:
        return false;
    }
  }

  return {
    'wh/tracker/private/store_webhook': (args, ctx) => {
      const body = parsePayload(trackerWebhookBodySchema, args.payload, 'a tracker webhook body');
      return db.transaction(async (sql) => {
        const applied = await apply(sql, body, args.team);
        const eventId = await new WebhookEvents(sql).append({
          team: args.team,
          status: args.status,
          type: body.type,
          action: body.action,
          applied,
          payload: args.payload,
          trace_id: ctx.traceId,
        });
        return { event_id: eventId, type: body.type, action: body.action, applied };
      });
    },

    'wh/tracker/private/handle_attachment_update': (args) => {
      const body = parsePayload(webhookAttachmentBodySchema, args.payload, 'an Attachment webhook body');
      return db.transaction(async (sql) => {
        const issues = new TrackerIssues(sql);
        if (body.action !== 'remove' && !(await issues.findById(body.data.issueId))) {
          throw new CallRefused(
            `No tracker issue with id ${body.data.issueId}: deliver the Issue webhook before its attachments.`,
            { path: ['payload', 'data', 'issueId'] },
          );
        }
        await issues.saveAttachment(body);
        return {
          attachment_id: body.data.id,
          issue_id: body.data.issueId,
          removed: body.action === 'remove',
        };
      });
    },
  };
}
