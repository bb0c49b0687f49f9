/** Word lists for names in the seed history: organisations, places and people (fictional). */
export const organisationNames: readonly { readonly name: string; readonly domain: string; readonly brand: string }[] = [
  { name: 'Bright Smile Dental Group', domain: 'brightsmile', brand: 'Bright Smile' },
  { name: 'Aurora Dental Clinics', domain: 'auroradental', brand: 'Aurora Dental' },
  { name: 'Oceanview Dental Care', domain: 'oceanviewdental', brand: 'Oceanview' },
  { name: 'Northgate Dental Partners', domain: 'northgatedental', brand: 'Northgate' },
  { name: 'Clínica Dental Sonrisa', domain: 'sonrisadental', brand: 'Sonrisa' },
  { name: 'Riverside Family Dentistry', domain: 'riversidedentistry', brand: 'Riverside' },
  { name: 'Atlântico Saúde Oral', domain: 'atlanticosaude', brand: 'Atlântico' },
  { name: 'Evergreen Dental Network', domain: 'evergreendental', brand: 'Evergreen' },
];

export const cityDistricts: readonly string[] = [
  'Centro',
  'Harbour',
  'Old Town',
  'Riverside',
  'North Park',
  'Westfield',
  'University',
  'Station Square',
  'Hillcrest',
  'Lakeside',
  'Market Street',
  'Eastgate',
];

export const cities: readonly string[] = ['Lisbon', 'Porto', 'Madrid', 'Valencia', 'Boston', 'Denver', 'Leeds', 'Bristol', 'Lyon', 'Austin'];

export const firstNames: readonly string[] = [
  'Ana', 'João', 'María', 'Lucas', 'Sofia', 'Daniel', 'Emma', 'Noah', 'Olivia', 'Mateo', 'Inês', 'Pedro', 'Laura', 'Hugo',
  'Chloe', 'Samuel', 'Grace', 'Rafael', 'Isabel', 'Tomás', 'Alice', 'David', 'Leonor', 'Martin', 'Clara', 'Miguel', 'Zoe',
  'Adam', 'Julia', 'Diego', 'Helena', 'Oliver', 'Carmen', 'Ethan', 'Beatriz', 'Leo', 'Marta', 'Nora', 'Pablo', 'Rita',
];

export const lastNames: readonly string[] = [
  'Silva', 'Santos', 'García', 'Martínez', 'Ferreira', 'Costa', 'Smith', 'Johnson', 'Brown', 'Pereira', 'López', 'Almeida',
  'Walker', 'Moreau', 'Dubois', 'Romero', 'Oliveira', 'Taylor', 'Hughes', 'Navarro', 'Carvalho', 'Evans', 'Martin',
  'Sousa', 'Ruiz', 'Clarke', 'Lambert', 'Gomes', 'Díaz', 'Wright', 'Rocha', 'Bernard', 'Castro', 'Reis', 'Patel',
];

export const carriers: readonly { readonly name: string; readonly trackingPrefix: string }[] = [
  { name: 'Internal courier', trackingPrefix: 'IC' },
  { name: 'DHL Express', trackingPrefix: 'JD' },
  { name: 'UPS', trackingPrefix: '1Z' },
  { name: 'MedLog Cold Chain', trackingPrefix: 'ML' },
];

/** Email-safe ASCII form of a name part. */
export function asciiSlug(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');
}
