"""The only modules that call AWS. Each function takes its boto3 client as a parameter."""
