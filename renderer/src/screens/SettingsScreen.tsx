import { useQuery } from '@tanstack/react-query';
import { ErrorLine, type ScreenProps } from './common.tsx';
import { ServiceMember } from './ServiceMember.tsx';
import { NotifyMe } from './NotifyMe.tsx';
import { RepositoriesSettings } from './RepositorySettings.tsx';
import { KeychainLine } from './settings/KeychainLine.tsx';
import { PersonalApiKey } from './settings/PersonalApiKey.tsx';
import { ServiceUrl } from './settings/ServiceUrl.tsx';
import { SignIn } from './settings/SignIn.tsx';
import { StartAtLogin } from './settings/StartAtLogin.tsx';

export function SettingsScreen({ api }: ScreenProps) {
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => api.getSettings({}) });
  const data = settings.data;

  return (
    <section aria-labelledby="settings-title" className="settings">
      <h2 id="settings-title">Settings</h2>
      <ErrorLine error={settings.error} />
      {data?.keychain === 'unavailable' && <KeychainLine data={data} />}
      {/* First: where "nothing to sync; set its flow folders in Settings" leads. */}
      <RepositoriesSettings api={api} />
      <ServiceUrl api={api} data={data} />
      <SignIn api={api} data={data} />
      <PersonalApiKey api={api} data={data} />
      <StartAtLogin api={api} />
      <NotifyMe />
      {/* Last: it comes when the service answers, and would push the forms above down under the user's pointer. */}
      {data && data.activeServiceFrom !== 'embedded' && <ServiceMember api={api} />}
    </section>
  );
}
