import { plural } from '../../plural.ts';

/** Files whose service copy was not written to disk, a line each with why (the others were settled). */
export function NotWritten(props: { files: readonly { flowPath: string; path: string; reason: string }[] }) {
  if (props.files.length === 0) return null;
  const shown = props.files.slice(0, 10);
  return (
    <div role="alert" className="error">
      <p>{plural(props.files.length, 'file')} not written, the others were:</p>
      <ul>
        {shown.map((file) => (
          <li key={`${file.flowPath}/${file.path}`}>
            <code>
              {file.flowPath}/{file.path}
            </code>
            : {file.reason}
          </li>
        ))}
        {props.files.length > shown.length && <li>… and {props.files.length - shown.length} more</li>}
      </ul>
    </div>
  );
}
