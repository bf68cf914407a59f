// The floor of a `flowsync status` that looks at the service (bench/peer.ts times it beside `status`): Node, the
// parts of undici the client loads (src/client/undici-parts.ts), one `list_flows` call over loopback and its JSON
// answer, and nothing else: no command line, no config, no state, no checks of the answer. What `status` does
// beyond this is what it could still save.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const dispatcher = require('undici/lib/dispatcher/dispatcher');
Object.assign(dispatcher.prototype, require('undici/lib/api'));
const Pool = require('undici/lib/dispatcher/pool');

const url = new URL(process.env.FLOWSYNC_URL);
const [owner, name] = process.argv.slice(2);
const pool = new Pool(url.origin);
const answer = await pool.request({
  path: `${url.pathname.replace(/\/$/, '')}/api/run/svc/flow_def/public/list_flows`,
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.FLOWSYNC_TOKEN}` },
  body: JSON.stringify({
    args: { repo_owner: owner, repo_name: name, baggage: { trace_id: 'floor', traffic_type: 'user' } },
  }),
});
const body = await answer.body.json();
await pool.close();
if (answer.statusCode !== 200 || body.value.flows.length === 0) {
  console.error(`list_flows answered ${answer.statusCode}: ${JSON.stringify(body).slice(0, 200)}`);
  process.exit(1);
}
