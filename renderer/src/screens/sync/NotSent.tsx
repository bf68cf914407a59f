import type { RepositoryView } from '../../../../src/window/index.ts';
import { warnedPath } from '../../../../src/protocol/index.ts';
import { plural } from '../../plural.ts';

/** The files not sent, folded, a line each with why. */
export function NotSent({ repo }: { repo: RepositoryView }) {
  if (repo.warnings.length === 0) return null;
  return (
    <details>
      <summary>{plural(repo.warnings.length, 'file')} not sent</summary>
      <ul className="files">
        {repo.warnings.map((w) => (
          <li key={warnedPath(w)}>
            <code>{warnedPath(w)}</code>: {w.reason}
          </li>
        ))}
      </ul>
    </details>
  );
}
