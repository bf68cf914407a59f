/** Where what was on disk went before the service's version replaced it (Recent activity says it too). */
export function Kept(props: { files: readonly { flowPath: string; path: string; where: string }[] }) {
  if (props.files.length === 0) return null;
  return (
    <ul role="status" aria-label="Your versions kept">
      {props.files.map((file) => (
        <li key={`${file.flowPath}/${file.path}`}>
          Yours of{' '}
          <code>
            {file.flowPath}/{file.path}
          </code>{' '}
          is {file.where}.
        </li>
      ))}
    </ul>
  );
}
