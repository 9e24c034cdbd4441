import type { ServiceDescriptor } from '@outbox-inbox/service-kit';
import { LauncherError } from '../launcher-error.ts';
import { services } from './services.ts';

function reads(service: ServiceDescriptor, name: string): boolean {
  return service.env.some((variable) => variable.name === name);
}

/**
 * The settings `service` reads, out of settings meant for the whole system
 * (RELAY_POLL_INTERVAL_MS for every service, PAYMENT_AMOUNT_LIMIT for one). A setting that no
 * service reads is a mistake (a typo, a variable that was removed) and throws.
 */
export function settingsFor(
  service: ServiceDescriptor,
  settings: Readonly<Record<string, string>>,
): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(settings)) {
    if (reads(service, name)) picked[name] = value;
    else if (!services.some((other) => reads(other, name))) {
      throw new LauncherError('UNKNOWN_SETTING', `no service reads ${name}`, {});
    }
  }
  return picked;
}
