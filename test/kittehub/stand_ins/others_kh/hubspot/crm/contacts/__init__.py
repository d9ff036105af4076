"""`hubspot.crm.contacts` models the kittehub projects build."""


class SimplePublicObjectInput:
    def __init__(self, properties=None, associations=None):
        self.properties, self.associations = properties or {}, associations

    def to_dict(self):
        body = {"properties": self.properties}
        if self.associations is not None:
            body["associations"] = self.associations
        return body


class SimplePublicObjectInputForCreate(SimplePublicObjectInput):
    def __init__(self, properties=None, associations=None):
        super().__init__(properties, associations if associations is not None else [])
